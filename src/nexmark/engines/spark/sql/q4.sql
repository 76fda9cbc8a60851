-- q4: the winning bid of each auction (a join, then MAX per auction), then the average winning
-- price per category: two aggregations in a row without event-time windows, which Spark's
-- streaming checks refuse (written as Spark SQL so that the refusal is Spark's own).
CREATE OR REPLACE TEMPORARY VIEW q4_winning_bids AS
SELECT a.id AS auction, a.category AS category, MAX(b.price) AS final_price
FROM auction AS a
INNER JOIN bid AS b ON a.id = b.auction
WHERE b.date_time BETWEEN a.date_time AND a.expires
GROUP BY a.id, a.category;

SELECT category, SUM(final_price) DIV COUNT(*) AS avg_price
FROM q4_winning_bids
GROUP BY category
