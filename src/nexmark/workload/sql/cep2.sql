-- cep2: cep1's pattern with overlapping matches: after each match the next one may start at
-- the row after the match's first row (SKIP TO NEXT ROW).
-- Spark SQL has no MATCH_RECOGNIZE: Spark runs this same statement, so that its refusal is its
-- own (its parser's).
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
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (CHEAP+ ENDING)
  DEFINE
    CHEAP AS AVG(CHEAP.price) < 10000
)
