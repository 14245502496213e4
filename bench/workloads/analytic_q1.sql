-- scan, filter, aggregate over the fact table (TPC-H Q1's shape)
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       avg(l_discount) AS avg_disc, count(*) AS count_order
  FROM lineitem
 WHERE l_shipdate <= date '1998-09-01'
 GROUP BY l_returnflag, l_linestatus
 ORDER BY l_returnflag, l_linestatus;
