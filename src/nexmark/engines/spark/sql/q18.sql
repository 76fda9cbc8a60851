-- spark: mode=update key=bidder,auction state=grows
-- q18: the last bid of each (bidder, auction) pair: deduplication keeping the LAST row needs a
-- ROW_NUMBER ordered by time descending, which Spark streaming refuses (its dropDuplicates
-- keeps the first row, a different result).
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
  SELECT
    auction, bidder, price, channel, url, date_time, extra,
    ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS place
  FROM bid
)
WHERE place = 1
