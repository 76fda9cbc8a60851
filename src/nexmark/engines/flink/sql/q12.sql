-- q12: bids per bidder in processing-time tumbling windows of 10 s (wall clock, p_time), so the
-- windows' contents depend on when rows arrive; only totals are reproducible.
SELECT bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end
