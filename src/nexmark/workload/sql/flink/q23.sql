-- q23: each bid joined with the person who placed it (id = bidder) and with every auction
-- that person sells (seller = bidder): a three-way regular join, all inputs stay in state.
SELECT
  b.auction, b.bidder, b.price, b.date_time AS bid_date_time,
  p.name AS person_name, p.city AS person_city, p.state AS person_state,
  a.id AS seller_auction, a.item_name, a.category, a.date_time AS auction_date_time
FROM bid AS b
INNER JOIN person AS p ON b.bidder = p.id
INNER JOIN auction AS a ON a.seller = b.bidder
