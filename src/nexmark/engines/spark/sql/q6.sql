-- q6: per seller, the average winning price of their last 10 closed auctions: an aggregation
-- followed by a ROWS OVER window, which Spark streaming refuses (only time windows).
CREATE OR REPLACE TEMPORARY VIEW q6_winning_bids AS
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
