-- q19: the 10 highest bids of each auction (top-N per key). Equal prices are ordered by time,
-- then bidder, so that the cut at 10 is reproducible.
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
  SELECT
    auction, bidder, price, channel, url, date_time, extra,
    ROW_NUMBER() OVER (
      PARTITION BY auction ORDER BY price DESC, date_time ASC, bidder ASC
    ) AS place
  FROM bid
)
WHERE place <= 10
