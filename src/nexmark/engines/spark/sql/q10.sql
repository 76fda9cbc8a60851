-- q10: every bid (without channel and url) with its day and hour-minute, written by Spark's
-- file sink as CSV partitioned by both (dt=.../hm=...). The sink is exactly once through its
-- own log (`_spark_metadata`), committed with each batch. Output: ${output_dir}
SELECT
  auction, bidder, price, date_time, extra,
  DATE_FORMAT(date_time, 'yyyy-MM-dd') AS dt,
  DATE_FORMAT(date_time, 'HH:mm') AS hm
FROM bid
