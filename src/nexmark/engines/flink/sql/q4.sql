-- q4: average winning price per category. The winning price of an auction is the highest bid
-- placed between its start and its expiry; a regular join keeps every auction and bid.
CREATE TEMPORARY VIEW q4_winning_bids AS
SELECT a.id AS auction, a.category AS category, MAX(b.price) AS final_price
FROM auction AS a
INNER JOIN bid AS b ON a.id = b.auction
WHERE b.date_time BETWEEN a.date_time AND a.expires
GROUP BY a.id, a.category;

SELECT category, AVG(final_price) AS avg_price
FROM q4_winning_bids
GROUP BY category
