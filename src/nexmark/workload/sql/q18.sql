-- q18: the last bid of each (bidder, auction) pair by event time: a deduplication (ROW_NUMBER
-- ordered by the time attribute, descending, = 1) keeping the last row. Flink runs it as its
-- deduplication operator; Spark streaming refuses the ROW_NUMBER (its dropDuplicates keeps the
-- first row, a different result).
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
  SELECT
    auction, bidder, price, channel, url, date_time, extra,
    ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS place
  FROM bid
)
WHERE place = 1
