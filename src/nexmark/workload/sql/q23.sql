-- q23: each bid joined with the person who placed it (id = bidder) and with every auction
-- that person sells (seller = bidder): a three-way regular join, all inputs stay in state
-- (on Spark: two stream-stream inner joins without time bounds, in append mode).
-- The columns are the reference suite's: the bid without its auction and time, every person
-- column but its time, every auction column but its id.
SELECT
  b.bidder, b.price, b.channel, b.url, b.extra AS bid_extra,
  p.id AS person_id, p.name, p.email_address, p.credit_card, p.city, p.state,
  p.extra AS person_extra,
  a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_date_time,
  a.expires, a.seller, a.category, a.extra AS auction_extra
FROM bid AS b
INNER JOIN person AS p ON b.bidder = p.id
INNER JOIN auction AS a ON a.seller = b.bidder
