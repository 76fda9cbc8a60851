-- q11: user sessions. Session windows per bidder closing after 10 s without a bid; the session
-- end is Flink's: the last bid's time plus the gap.
SELECT bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end
