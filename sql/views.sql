--
-- numasched's views and functions on a running instance (this machine's
-- topology differs from CI's, so rows are checked by their properties)
--
CREATE EXTENSION numasched;

SELECT count(*) > 0 AS has_nodes, bool_and(ncpus > 0 OR memory_only) AS cpus_or_memory
  FROM numasched_topology;
SELECT bool_and(distance >= 10) AS slit_distances,
       count(*) = (SELECT count(*) * count(*) FROM numasched_topology) AS every_pair
  FROM numasched_distances;
SELECT count(*) > 0 AS has_groups,
       sum(ncpus) = (SELECT sum(ncpus) FROM numasched_topology WHERE cpu_groups > 0) AS cover_the_nodes
  FROM numasched_groups;

-- this session was placed when it connected
SELECT backend_type, leader_pid, bound, moves FROM numasched_processes
  WHERE pid = pg_backend_pid();
SELECT p.cpus = g.cpus AS has_its_groups_cpus, p.node = g.node AS on_its_groups_node
  FROM numasched_processes p JOIN numasched_groups g USING (cpu_group)
  WHERE p.pid = pg_backend_pid();
-- its private memory is on its node (one node here; the VM checks several)
SELECT l.node = p.node AS its_node, private_pages_local > 0 AS has_private_pages,
       private_pages_elsewhere, local_percent
  FROM numasched_locality l JOIN numasched_processes p USING (pid)
  WHERE pid = pg_backend_pid();
SELECT sum(private_pages) > 0 AS has_private_pages, bool_and(private_pages <= pages) AS within_all
  FROM numasched_memory(pg_backend_pid());
SELECT sum(load) >= 1 AS counted, sum(processes) >= 1 AS listed FROM numasched_groups;
SELECT placements >= 1 AS counted, bind_failures FROM numasched_stats;
-- the kernel's memory calls: used with several memory nodes, none with one
SELECT memory_calls = CASE WHEN count(*) > 1 THEN 'used' ELSE 'not needed: one memory node' END
         AS as_the_machine
  FROM numasched_stats, numasched_topology WHERE memory_mb > 0 GROUP BY memory_calls;

SELECT numasched_reset_stats();
SELECT placements, placements_home, placements_1_hop, placements_farther, steals, moves,
       bind_failures, stats_reset > now() - interval '1 minute' AS just_reset
  FROM numasched_stats;

-- moving by hand
SELECT min(node) AS node FROM numasched_topology WHERE cpu_groups > 0 \gset
SELECT numasched_move(pg_backend_pid(), :node);
SELECT moves, node = :node AS on_that_node FROM numasched_processes WHERE pid = pg_backend_pid();
SELECT moves FROM numasched_stats;
-- a negative group is no group (NULL asks for the least-loaded one)
SELECT numasched_move(pg_backend_pid(), :node, -5);
SELECT numasched_move(pg_backend_pid(), :node,
    (SELECT max(cpu_group) FROM numasched_groups WHERE node = :node));
SELECT cpu_group = (SELECT max(cpu_group) FROM numasched_groups WHERE node = :node) AS in_that_group
  FROM numasched_processes WHERE pid = pg_backend_pid();

-- bad pids, nodes and groups
SELECT numasched_move(pg_backend_pid(), 1023);
SELECT numasched_move(pg_backend_pid(), -1);
\set VERBOSITY terse
SELECT numasched_move(pg_backend_pid(), :node, 100000);
\set VERBOSITY default
SELECT numasched_move(999999, :node);
SELECT numasched_move(NULL, :node);
-- a server process that numasched does not place (the warning names its pid)
SET client_min_messages = error;
SELECT numasched_move(pid, :node) FROM pg_stat_activity WHERE backend_type = 'numasched scheduler';
RESET client_min_messages;

-- privileges: like pg_stat_activity and pg_terminate_backend
CREATE ROLE numasched_nobody;
SET ROLE numasched_nobody;
SELECT numasched_reset_stats();
SELECT numasched_move(pg_backend_pid(), :node);
SELECT count(*) > 0 AS sees_pids, count(cpus) AS sees_details
  FROM numasched_processes WHERE pid = pg_backend_pid();
SELECT count(*) > 0 AS sees_pids, count(local_percent) AS sees_figures
  FROM numasched_locality WHERE pid = pg_backend_pid();
SELECT count(*) FROM numasched_shared_memory;
-- a group's figures are its sessions' activity: the groups themselves, not them
SELECT count(*) > 0 AS sees_groups, count(cpus) = count(*) AS sees_cpus,
       count(load) + count(processes) + count(statements) AS sees_figures
  FROM numasched_groups;
RESET ROLE;
GRANT pg_read_all_stats TO numasched_nobody;
SET ROLE numasched_nobody;
SELECT count(cpus) AS sees_details FROM numasched_processes WHERE pid = pg_backend_pid();
SELECT count(*) > 0 AS sees_groups, count(load) + count(processes) + count(statements) = 3 * count(*) AS sees_figures
  FROM numasched_groups;
SELECT count(*) > 0 AS sees_shared_memory FROM numasched_shared_memory;
RESET ROLE;
DROP ROLE numasched_nobody;

DROP EXTENSION numasched;
