-- q5: hot items. Bids per auction in hopping windows of 10 s sliding every 2 s; in each window
-- the auction(s) with the most bids. Flink's window top-N takes only ROW_NUMBER, which would
-- drop ties, so the per-window maximum is window-joined back to the counts instead: every
-- auction tied for the top count appears, and all state is dropped when its window closes.
-- The output is the reference suite's (auction, num): the window bounds are not emitted. The
-- window's end comes last for the latency stamps alone (Query.stamp_column): every other sink
-- drops it.
CREATE TEMPORARY VIEW q5_counts AS
SELECT auction, COUNT(*) AS num, window_start, window_end
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;

SELECT c.auction, c.num, c.window_end
FROM q5_counts AS c
INNER JOIN (
  SELECT MAX(num) AS max_num, window_start, window_end
  FROM q5_counts
  GROUP BY window_start, window_end
) AS m
  ON c.window_start = m.window_start
  AND c.window_end = m.window_end
  AND c.num = m.max_num
