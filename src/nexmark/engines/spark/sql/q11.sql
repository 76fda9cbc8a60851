-- q11: user sessions. Session windows per bidder closing after 10 s without a bid; the session
-- end is the last bid's time plus the gap (as in Flink). Emitted when the watermark passes it.
SELECT bidder, COUNT(*) AS bid_count,
  session_window.start AS window_start, session_window.end AS window_end
FROM bid
GROUP BY bidder, session_window(date_time, '10 seconds')
