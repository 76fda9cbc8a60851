-- q1: every bid with its price in euros. The rate is an exact DECIMAL(4,3), so the product is
-- an exact DECIMAL with 3 places (DECIMAL(24,3)), never a rounded DOUBLE. The columns are the
-- reference suite's: channel and url are not carried.
SELECT
  auction,
  bidder,
  CAST(0.908 AS DECIMAL(4, 3)) * price AS price,
  date_time,
  extra
FROM bid
