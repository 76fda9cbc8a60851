-- q6: per seller, the average winning price of their last 10 closed auctions. The winning bid
-- is q4's (highest bid between start and expiry); the average is an OVER window of the 10 most
-- recent rows per seller, ordered by the auction's expiry (its closing time).
CREATE TEMPORARY VIEW q6_winning_bids AS
SELECT a.id AS auction, a.seller AS seller, a.expires AS expires, MAX(b.price) AS final_price
FROM auction AS a
INNER JOIN bid AS b ON a.id = b.auction
WHERE b.date_time BETWEEN a.date_time AND a.expires
GROUP BY a.id, a.seller, a.expires;

SELECT
  seller,
  AVG(final_price) OVER (
    PARTITION BY seller ORDER BY expires ROWS BETWEEN 9 PRECEDING AND CURRENT ROW
  ) AS avg_price
FROM q6_winning_bids
