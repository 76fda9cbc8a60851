-- q12: processing-time tumbling windows of 10 s, bids per bidder. Spark has no processing-time
-- attribute: current_timestamp() is each micro-batch's start time, so a window over it groups
-- the bids of the batches started in those 10 s. Such a window is not an event-time window:
-- it runs in update mode and its state is never dropped (no watermark on it).
SELECT bidder, COUNT(*) AS bid_count, window.start AS window_start, window.end AS window_end
FROM bid
GROUP BY bidder, window(current_timestamp(), '10 seconds')
