-- cep3: sudden drops. Per (auction, bidder), in event time (equal times by price), a bid, any
-- bids priced above its price minus 50, then one priced below its price minus 50, the last
-- less than 5 s after the first (WITHIN): the drop's time and size (first price minus the
-- dropped price). The next match starts after the drop.
-- Spark SQL has no MATCH_RECOGNIZE: Spark runs this same statement, so that its refusal is its
-- own (its parser's).
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
