-- cep0: V shapes, as the reference runner's cep q0 defines them. Per (auction, bidder), in event
-- time (equal times by price), a bid, one or more bids each priced below the one before, then
-- one priced above the fall before the last one: so at least two falls, and a rise that climbs
-- back over the last two steps down (after a single fall the offset below is null, and that bid
-- is no rise). The next match may start at that rising bid (SKIP TO LAST rising row). Flink
-- refuses PREV ("physical offsets within partition"): the bids before are reached through
-- logical offsets over the falling rows.
-- Spark SQL has no MATCH_RECOGNIZE: Spark runs this same statement, so that its refusal is its
-- own (its parser's).
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
    -- In V_FALL's own condition the row under test is LAST(V_FALL), offset 0: offset 1 is
    -- the fall before it (null for the first fall, which compares with the start instead).
    V_FALL AS V_FALL.price < COALESCE(LAST(V_FALL.price, 1), FIRST(V_START.price)),
    -- In V_RISE's condition the row under test is no fall: offset 0 is the last fall (the
    -- bottom), offset 1 the fall before it.
    V_RISE AS V_RISE.price > LAST(V_FALL.price, 1)
)
