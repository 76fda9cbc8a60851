-- spark: mode=append state=grows
-- cep1: Spark SQL has no MATCH_RECOGNIZE; the Flink query as it is, so that the refusal is
-- Spark's own (its parser's).
SELECT auction, bidder, start_time, end_time, avg_price
FROM bid
MATCH_RECOGNIZE (
  PARTITION BY auction, bidder
  ORDER BY date_time, price
  MEASURES
    FIRST(CHEAP.date_time) AS start_time,
    LAST(CHEAP.date_time) AS end_time,
    AVG(CHEAP.price) AS avg_price
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (CHEAP+ ENDING)
  DEFINE
    CHEAP AS AVG(CHEAP.price) < 10000
)
