-- q13: bids joined with a static side table of 10,000 rows keyed by auction mod 10000.
-- Flink 2.3's filesystem connector cannot serve lookups, so the side table is a versioned
-- table read once from CSV (primary key side_key, every row valid from 1970) and the join is an
-- event-time temporal join: deterministic, with state bounded by the side table and the bids
-- waiting for the watermark. See docs/queries.md. The output columns are the reference suite's:
-- the bid's auction, bidder, price and time, then the side value.
CREATE TEMPORARY TABLE q13_side (
  side_key BIGINT,
  side_value VARCHAR,
  valid_from TIMESTAMP(3),
  WATERMARK FOR valid_from AS valid_from,
  PRIMARY KEY (side_key) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${side_table_dir}',
  'format' = 'csv'
);

SELECT b.auction, b.bidder, b.price, b.date_time, s.side_value
FROM bid AS b
INNER JOIN q13_side FOR SYSTEM_TIME AS OF b.date_time AS s
  ON MOD(b.auction, 10000) = s.side_key
