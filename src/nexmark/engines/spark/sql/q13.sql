-- q13: every bid joined with the static side table (10,000 rows) on auction mod 10000: a
-- stream-static join. The side table is read once as a batch table and broadcast; no state.
CREATE OR REPLACE TEMPORARY VIEW q13_side (side_key BIGINT, side_value STRING, valid_from TIMESTAMP)
USING csv
OPTIONS (
  path '${side_table_dir}',
  header 'false',
  timestampFormat 'yyyy-MM-dd HH:mm:ss.SSS'
);

SELECT b.auction, b.bidder, b.price, b.date_time, s.side_value
FROM bid AS b
INNER JOIN q13_side AS s ON b.auction % 10000 = s.side_key
