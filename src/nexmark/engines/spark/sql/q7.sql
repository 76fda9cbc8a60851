-- q7: highest bid(s) per tumbling 10 s window. Spark cannot join a stream to its own
-- aggregate, so this is a chained time-window aggregation: the bids of each (window, price)
-- first, then per window the list of the highest price's bids. Every bid tied for the top
-- price appears. All state is dropped when the watermark passes the window's end (the bids
-- of an open window are the state, as in Flink's join).
CREATE OR REPLACE TEMPORARY VIEW q7_prices AS
SELECT window(date_time, '10 seconds') AS window, price,
  COLLECT_LIST(NAMED_STRUCT('auction', auction, 'bidder', bidder, 'date_time', date_time, 'extra', extra)) AS bids
FROM bid
GROUP BY window(date_time, '10 seconds'), price;

CREATE OR REPLACE TEMPORARY VIEW q7_top AS
SELECT window, MAX_BY(bids, price) AS bids, MAX(price) AS price
FROM q7_prices
GROUP BY window;

SELECT b.auction, price, b.bidder, b.date_time, b.extra
FROM q7_top LATERAL VIEW EXPLODE(bids) t AS b
