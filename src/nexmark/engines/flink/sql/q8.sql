-- q8: new users who opened an auction in the window they registered in (tumbling 10 s).
-- A window join: its state is dropped when the watermark passes the window end. Auctions are
-- grouped per seller first so that a person appears once per window, however many they opened.
SELECT p.id, p.name, p.window_start
FROM (
  SELECT id, name, window_start, window_end
  FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
) AS p
INNER JOIN (
  SELECT seller, window_start, window_end
  FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
  GROUP BY seller, window_start, window_end
) AS a
  ON p.id = a.seller
  AND p.window_start = a.window_start
  AND p.window_end = a.window_end
