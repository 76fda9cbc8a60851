-- q9: the winning bid of each auction: the highest bid placed between the auction's start and
-- its expiry, the earliest one on equal prices (then the lowest bidder, so that the row is
-- deterministic), with every auction column. A regular join, then a top-1 per auction.
SELECT
  id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
  bidder, price, bid_date_time
FROM (
  SELECT
    a.id, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
    a.seller, a.category, a.extra,
    b.bidder, b.price, b.date_time AS bid_date_time,
    ROW_NUMBER() OVER (
      PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC, b.bidder ASC
    ) AS place
  FROM auction AS a
  INNER JOIN bid AS b ON a.id = b.auction
  WHERE b.date_time BETWEEN a.date_time AND a.expires
)
WHERE place = 1
