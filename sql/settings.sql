--
-- numasched's settings: what they are, which values are refused and why
--
CREATE EXTENSION numasched;
SELECT extname, extversion FROM pg_extension WHERE extname = 'numasched';

SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals
  FROM pg_settings WHERE name LIKE 'numasched.%' ORDER BY name;

-- what shapes the groups is set in the configuration, not per session
SET numasched.groups_per_node = 2;
-- the prefix is reserved: a typo is an error, not a silent placeholder
SET numasched.groups_pre_node = 2;

-- accepted values land in postgresql.auto.conf
ALTER SYSTEM SET numasched.groups_per_node = 1;
ALTER SYSTEM SET numasched.parallel_placement = spread;
ALTER SYSTEM SET numasched.max_steal_distance = 0;
ALTER SYSTEM SET numasched.max_steal_distance = 32;
ALTER SYSTEM SET numasched.rebalance_interval = '250ms';
ALTER SYSTEM SET numasched.nodes = '0';
ALTER SYSTEM SET numasched.nodes = '';
ALTER SYSTEM SET numasched.interleave_nodes = '0';
ALTER SYSTEM SET numasched.cpu_priority = background;
SELECT name, setting FROM pg_file_settings
  WHERE name LIKE 'numasched.%' AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno;

-- refused values say what is allowed
ALTER SYSTEM SET numasched.max_steal_distance = 5;
ALTER SYSTEM SET numasched.max_steal_distance = 256;
ALTER SYSTEM SET numasched.imbalance_threshold = 0;
ALTER SYSTEM SET numasched.memory_policy = 'strict';
ALTER SYSTEM SET numasched.parallel_placement = 'wide';
ALTER SYSTEM SET numasched.cpu_priority = 'low';
-- PostgreSQL 17 added units to the range in this message: the code only
\set VERBOSITY sqlstate
ALTER SYSTEM SET numasched.rebalance_interval = '-1s';
\set VERBOSITY default
ALTER SYSTEM SET numasched.nodes = '0-';
ALTER SYSTEM SET numasched.nodes = 'zero';
ALTER SYSTEM SET numasched.nodes = '1023';
ALTER SYSTEM SET numasched.shared_memory = 'interleave';
ALTER SYSTEM SET numasched.interleave_nodes = '1023';
ALTER SYSTEM SET numasched.interleave_nodes = 'zero';
-- more groups than a node has CPUs: the detail names this machine's numbers
\set VERBOSITY terse
ALTER SYSTEM SET numasched.groups_per_node = 1024;
\set VERBOSITY default

ALTER SYSTEM RESET ALL;
SELECT count(*) FROM pg_file_settings
  WHERE name LIKE 'numasched.%' AND sourcefile LIKE '%postgresql.auto.conf';
DROP EXTENSION numasched;
