-- q14: bids with a mid-range euro price, labelled by time of day, with the number of 'c'
-- characters in extra. Everything is built in (no user-defined function): the count is the
-- length lost when every 'c' is removed.
SELECT
  auction,
  bidder,
  CAST(0.908 AS DECIMAL(4, 3)) * price AS price,
  CASE
    WHEN HOUR(date_time) BETWEEN 8 AND 18 THEN 'dayTime'
    WHEN HOUR(date_time) <= 6 OR HOUR(date_time) >= 20 THEN 'nightTime'
    ELSE 'otherTime'
  END AS bid_time_type,
  date_time,
  extra,
  CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')) AS c_counts
FROM bid
WHERE CAST(0.908 AS DECIMAL(4, 3)) * price > 1000000
  AND CAST(0.908 AS DECIMAL(4, 3)) * price < 50000000
