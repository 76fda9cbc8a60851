-- spark: mode=append state=grows
-- cep3: Spark SQL has no MATCH_RECOGNIZE; the Flink query as it is, so that the refusal is
-- Spark's own (its parser's).
SELECT auction, bidder, drop_time, drop_size
FROM bid
MATCH_RECOGNIZE (
  PARTITION BY auction, bidder
  ORDER BY date_time, price
  MEASURES
    LAST(DROPPED.date_time) AS drop_time,
    FIRST(FIRST_BID.price) - LAST(DROPPED.price) AS drop_size
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (FIRST_BID HELD* DROPPED) WITHIN INTERVAL '5' SECOND
  DEFINE
    HELD AS HELD.price > FIRST_BID.price - 50,
    DROPPED AS DROPPED.price < FIRST_BID.price - 50
)
