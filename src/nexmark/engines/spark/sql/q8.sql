-- q8: new users who opened an auction in the window they registered in (tumbling 10 s). A
-- left semi join on the person and the window keeps each person once per window however many
-- auctions they opened; it emits a person as soon as a match arrives, so a time-window
-- aggregation follows to release each window only once the watermark passes its end (as a
-- window join does). The state of both is dropped when the watermark passes the window end.
CREATE OR REPLACE TEMPORARY VIEW q8_matches AS
SELECT p.id, p.name, p.w
FROM (SELECT id, name, window(date_time, '10 seconds') AS w FROM person) AS p
LEFT SEMI JOIN (SELECT seller, window(date_time, '10 seconds') AS w FROM auction) AS a
  ON p.id = a.seller AND p.w = a.w;

SELECT id, name, w.start AS window_start
FROM q8_matches
GROUP BY w, id, name
