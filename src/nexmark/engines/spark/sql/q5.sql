-- q5: hot items. Bids per auction in hopping windows of 10 s sliding every 2 s, then per window
-- the largest count and every (auction, count) of the window: a chained time-window
-- aggregation (the second groups by the first one's window). Both emit a window once the
-- watermark passes its end, and drop its state then. Ties are kept: every auction whose count
-- equals the window's maximum is returned. Output (auction, num), without the window bounds;
-- the window's end comes last for the latency stamps alone (Query.stamp_column): every other
-- sink drops it.
CREATE OR REPLACE TEMPORARY VIEW q5_counts AS
SELECT window(date_time, '10 seconds', '2 seconds') AS window, auction, COUNT(*) AS num
FROM bid
GROUP BY window(date_time, '10 seconds', '2 seconds'), auction;

CREATE OR REPLACE TEMPORARY VIEW q5_top AS
SELECT window, MAX(num) AS max_num, COLLECT_LIST(NAMED_STRUCT('auction', auction, 'num', num)) AS counts
FROM q5_counts
GROUP BY window;

SELECT c.auction, c.num, window.end AS window_end
FROM q5_top LATERAL VIEW EXPLODE(counts) t AS c
WHERE c.num = max_num
