-- bursty: one short CPU-heavy query per transaction (numabench sizes
-- :burst_rows for about --burst-ms of one CPU); pgbench -R starts them at
-- random (Poisson) times, so that they arrive in bursts and pauses
SELECT sum(i) FROM generate_series(1, :burst_rows) i;
