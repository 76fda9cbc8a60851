-- q22: the 3rd, 4th and 5th parts of each bid's URL split on '/' (counted from 0:
-- https: / '' / host / dir1 / dir2 / dir3 / page).
SELECT
  auction, bidder, price, channel,
  SPLIT(url, '/')[3] AS dir1,
  SPLIT(url, '/')[4] AS dir2,
  SPLIT(url, '/')[5] AS dir3
FROM bid
