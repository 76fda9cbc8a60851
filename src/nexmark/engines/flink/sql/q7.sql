-- q7: highest bid(s) per tumbling 10 s window. The window maximum is joined back to the bids
-- with a regular join (the bid side stays in state), so every bid tied for the top price appears.
SELECT b.auction, b.price, b.bidder, b.date_time, b.extra
FROM bid AS b
INNER JOIN (
  SELECT MAX(price) AS max_price, window_start, window_end
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end
) AS m
  ON b.price = m.max_price
  AND b.date_time >= m.window_start
  AND b.date_time < m.window_end
