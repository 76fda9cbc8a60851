-- q10: every bid with its day and hour-minute, written as CSV files partitioned by both into
-- ${output_dir}. Files are finished at each checkpoint (or at the end of a bounded input).
-- The bid columns are the reference suite's: channel and url are not written.
CREATE TEMPORARY TABLE q10_files (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  date_time TIMESTAMP(3),
  extra VARCHAR,
  dt VARCHAR,
  hm VARCHAR
) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem',
  'path' = '${output_dir}',
  'format' = 'csv',
  'sink.partition-commit.trigger' = 'process-time',
  'sink.partition-commit.delay' = '0 s',
  'sink.partition-commit.policy.kind' = 'success-file'
);

INSERT INTO q10_files
SELECT
  auction, bidder, price, date_time, extra,
  DATE_FORMAT(date_time, 'yyyy-MM-dd') AS dt,
  DATE_FORMAT(date_time, 'HH:mm') AS hm
FROM bid
