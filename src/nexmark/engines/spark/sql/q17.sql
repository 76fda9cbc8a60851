-- q17: per (auction, day), bid counts in total and per price band, and price statistics. No
-- event-time key, so the aggregation runs in update mode (each batch emits the new row of every
-- key it changed) and its state is never dropped (Spark has no state TTL for SQL).
-- avg_price as Flink's AVG of a BIGINT: SUM / COUNT truncated toward zero (prices are > 0).
SELECT
  auction,
  DATE_FORMAT(date_time, 'yyyy-MM-dd') AS `day`,
  COUNT(*) AS total_bids,
  COUNT(*) FILTER (WHERE price < 10000) AS rank1_bids,
  COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  COUNT(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  MIN(price) AS min_price,
  MAX(price) AS max_price,
  SUM(price) DIV COUNT(*) AS avg_price,
  SUM(price) AS sum_price
FROM bid
GROUP BY auction, DATE_FORMAT(date_time, 'yyyy-MM-dd')
