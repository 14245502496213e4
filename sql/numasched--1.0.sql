/* numasched--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION numasched" to load this file. \quit

CREATE FUNCTION numasched_topology(
    OUT node integer,
    OUT cpus text,
    OUT ncpus integer,
    OUT memory_mb bigint,
    OUT memory_only boolean,
    OUT cpu_groups integer,
    OUT steal_order integer[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_topology'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_topology AS SELECT * FROM numasched_topology();

CREATE FUNCTION numasched_distances(
    OUT from_node integer,
    OUT to_node integer,
    OUT distance integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_distances'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_distances AS SELECT * FROM numasched_distances();

CREATE FUNCTION numasched_groups(
    OUT cpu_group integer,
    OUT node integer,
    OUT cpus text,
    OUT ncpus integer,
    OUT load double precision,
    OUT processes integer,
    OUT statements integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_groups'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_groups AS SELECT * FROM numasched_groups();

CREATE FUNCTION numasched_processes(
    OUT pid integer,
    OUT backend_type text,
    OUT leader_pid integer,
    OUT node integer,
    OUT cpu_group integer,
    OUT cpus text,
    OUT bound boolean,
    OUT placed_at timestamptz,
    OUT moves bigint,
    OUT class_groups text,
    OUT spill text,
    OUT load double precision,
    OUT lent_cpus text,
    OUT cpu_priority text,
    OUT executor text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_processes'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_processes AS SELECT * FROM numasched_processes();

-- Workload classes at a glance: per role and database (a parallel worker
-- counts as its leader's), where their processes run, at which CPU priority,
-- and the CPU they used (a background process's load fills no group: it runs
-- on what normal work leaves idle).
CREATE VIEW numasched_workloads AS
SELECT a.usename AS role,
       a.datname AS database,
       p.class_groups,
       p.spill,
       p.node,
       p.cpu_group,
       p.cpu_priority,
       count(*) AS processes,
       count(*) FILTER (WHERE p.backend_type = 'parallel worker') AS parallel_workers,
       sum(p.load) AS load
  FROM numasched_processes p
  LEFT JOIN pg_stat_activity a ON a.pid = p.pid
 GROUP BY 1, 2, 3, 4, 5, 6, 7;

CREATE FUNCTION numasched_stats(
    OUT placements bigint,
    OUT placements_home bigint,
    OUT placements_1_hop bigint,
    OUT placements_farther bigint,
    OUT steals bigint,
    OUT moves bigint,
    OUT moves_same_node bigint,
    OUT moves_1_hop bigint,
    OUT moves_farther bigint,
    OUT bind_failures bigint,
    OUT passes bigint,
    OUT pages_migrated bigint,
    OUT pages_copied bigint,
    OUT scheduler_restarts bigint,
    OUT lends bigint,
    OUT lend_returns bigint,
    OUT statement_lends bigint,
    OUT homecomings bigint,
    OUT last_pass timestamptz,
    OUT memory_calls text,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_stats AS SELECT * FROM numasched_stats();

-- Pages per node of a server process's memory, from /proc/PID/numa_maps:
-- all of it, and its private memory (heap, stack, anonymous mappings).
CREATE FUNCTION numasched_memory(pid integer,
    OUT node integer,
    OUT pages bigint,
    OUT size_mb double precision,
    OUT private_pages bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_memory'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Private pages of each placed process on its node and elsewhere: reads the
-- numa_maps of every process, so it costs more than numasched_processes.
CREATE FUNCTION numasched_locality(
    OUT pid integer,
    OUT backend_type text,
    OUT node integer,
    OUT private_pages_local bigint,
    OUT private_pages_elsewhere bigint,
    OUT local_percent double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_locality'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW numasched_locality AS SELECT * FROM numasched_locality();

-- Pages per node of the main shared memory segment, counting only the pages
-- that are there (mincore), without faulting any in.
CREATE FUNCTION numasched_shared_memory(
    OUT node integer,
    OUT pages bigint,
    OUT size_mb double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'numasched_shared_memory_pages'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW numasched_shared_memory AS SELECT * FROM numasched_shared_memory();

-- Checks inside follow pg_terminate_backend: the role of the process, or
-- pg_signal_backend; superusers' processes only for superusers.
CREATE FUNCTION numasched_move(pid integer, node integer, cpu_group integer DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'numasched_move'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION numasched_reset_stats()
RETURNS void
AS 'MODULE_PATHNAME', 'numasched_reset_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Like pg_stat_statements_reset: superusers only unless granted.
REVOKE ALL ON FUNCTION numasched_reset_stats() FROM PUBLIC;

GRANT SELECT ON numasched_topology, numasched_distances, numasched_groups,
    numasched_processes, numasched_workloads, numasched_locality, numasched_stats TO PUBLIC;

-- Like pg_shmem_allocations_numa: a call looks up every resident page of the
-- segment and maps it into the caller, so only for pg_read_all_stats.
REVOKE ALL ON FUNCTION numasched_shared_memory() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION numasched_shared_memory() TO pg_read_all_stats;
GRANT SELECT ON numasched_shared_memory TO pg_read_all_stats;
