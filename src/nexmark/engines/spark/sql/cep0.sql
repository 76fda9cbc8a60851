-- spark: mode=append state=grows
-- cep0: Spark SQL has no MATCH_RECOGNIZE; the Flink query as it is, so that the refusal is
-- Spark's own (its parser's). The rise is above the fall before the last one (Flink's cep0.sql).
SELECT auction, bidder, start_time, bottom_time, end_time
FROM bid
MATCH_RECOGNIZE (
  PARTITION BY auction, bidder
  ORDER BY date_time, price
  MEASURES
    FIRST(V_START.date_time) AS start_time,
    LAST(V_FALL.date_time) AS bottom_time,
    LAST(V_RISE.date_time) AS end_time
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST V_RISE
  PATTERN (V_START V_FALL+ V_RISE)
  DEFINE
    V_FALL AS V_FALL.price < COALESCE(LAST(V_FALL.price, 1), FIRST(V_START.price)),
    V_RISE AS V_RISE.price > LAST(V_FALL.price, 1)
)
