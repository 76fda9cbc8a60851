-- cep1: cheap runs. Per (auction, bidder), in event time (equal times by price), the longest
-- run of bids whose running average price stays under 10,000, ended by the next bid (the one
-- that would bring the average to 10,000 or more): the run's first and last bid times and its
-- average (AVG of a BIGINT: truncated). The next match starts after the ending bid.
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
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (CHEAP+ ENDING)
  DEFINE
    CHEAP AS AVG(CHEAP.price) < 10000
)
