-- q1: every bid with its price in euros. The rate is an exact DECIMAL(4,3), so the product is
-- an exact DECIMAL with 3 places (DECIMAL(23,3)), never a rounded DOUBLE.
SELECT
  auction,
  bidder,
  CAST(0.908 AS DECIMAL(4, 3)) * price AS price,
  channel,
  url,
  date_time,
  extra
FROM bid
