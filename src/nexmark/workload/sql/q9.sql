-- q9: the winning bid of each auction: the highest bid placed between the auction's start and
-- its expiry, the earliest one on equal prices (then the lowest bidder), with every auction
-- column and the winning bid's auction, bidder, price, time and extra (the reference suite's
-- columns). A regular join, then a top-1 per auction. Bids equal in price, time and bidder may
-- still differ in extra: which of them wins depends on the order they reach the top-1.
-- Spark streaming refuses the top-1 (ROW_NUMBER is a non-time window function there).
SELECT
  id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
  auction, bidder, price, bid_date_time, bid_extra
FROM (
  SELECT
    a.id, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
    a.seller, a.category, a.extra,
    b.auction, b.bidder, b.price, b.date_time AS bid_date_time, b.extra AS bid_extra,
    ROW_NUMBER() OVER (
      PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC, b.bidder ASC
    ) AS place
  FROM auction AS a
  INNER JOIN bid AS b ON a.id = b.auction
  WHERE b.date_time BETWEEN a.date_time AND a.expires
)
WHERE place = 1
