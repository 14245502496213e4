-- OLTP read-only, in the spirit of sysbench's oltp_read_only: ten point
-- selects by primary key in one transaction (pgbench's accounts table).
\set aid1 random(1, 100000 * :scale)
\set aid2 random(1, 100000 * :scale)
\set aid3 random(1, 100000 * :scale)
\set aid4 random(1, 100000 * :scale)
\set aid5 random(1, 100000 * :scale)
\set aid6 random(1, 100000 * :scale)
\set aid7 random(1, 100000 * :scale)
\set aid8 random(1, 100000 * :scale)
\set aid9 random(1, 100000 * :scale)
\set aid10 random(1, 100000 * :scale)
BEGIN;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid1;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid2;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid3;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid4;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid5;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid6;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid7;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid8;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid9;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid10;
END;
