-- The parallel analytic workload's data: a lineitem-like fact table of
-- :rows rows and a part table of :parts rows, generated here (no download),
-- with a fixed seed so that every cluster gets the same data.
SELECT setseed(0.42);
DROP TABLE IF EXISTS lineitem, part;
CREATE TABLE part (
    p_partkey integer PRIMARY KEY,
    p_brand text NOT NULL,
    p_size integer NOT NULL
);
INSERT INTO part
SELECT g, 'Brand#' || (1 + (g % 5)) || (1 + (g / 5 % 5)), 1 + (random() * 49)::int
  FROM generate_series(1, :parts) g;
CREATE TABLE lineitem (
    l_orderkey bigint NOT NULL,
    l_partkey integer NOT NULL,
    l_quantity numeric(15,2) NOT NULL,
    l_extendedprice numeric(15,2) NOT NULL,
    l_discount numeric(15,2) NOT NULL,
    l_tax numeric(15,2) NOT NULL,
    l_returnflag char(1) NOT NULL,
    l_linestatus char(1) NOT NULL,
    l_shipdate date NOT NULL
);
INSERT INTO lineitem
SELECT g / 4, 1 + (random() * (:parts - 1))::int, q, q * (900 + random() * 200),
       (random() * 10)::int / 100.0, (random() * 8)::int / 100.0,
       (ARRAY['A', 'N', 'R'])[1 + (random() * 2)::int], (ARRAY['F', 'O'])[1 + (random())::int],
       date '1992-01-01' + (random() * 2400)::int
  FROM generate_series(1, :rows) g,
       LATERAL (SELECT 1 + (random() * 49)::int + 0 * g AS q) qq;  -- per row: it names g
VACUUM ANALYZE part, lineitem;
