-- q3: regular (unbounded) join of category-10 auctions with sellers living in OR, ID or CA.
-- Both sides stay in state: an auction may arrive before its seller's registration or after.
SELECT p.name, p.city, p.state, a.id
FROM auction AS a
INNER JOIN person AS p ON a.seller = p.id
WHERE a.category = 10 AND p.state IN ('OR', 'ID', 'CA')
