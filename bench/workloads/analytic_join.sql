-- a parallel hash join of the fact table with part, then an aggregate
SELECT p_brand, sum(l_extendedprice) AS revenue, count(*) AS lines
  FROM lineitem JOIN part ON p_partkey = l_partkey
 WHERE p_size < 25 AND l_quantity < 25
 GROUP BY p_brand
 ORDER BY revenue DESC
 LIMIT 10;
