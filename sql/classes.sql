--
-- workload classes: the settings a role, a database and a session may set,
-- who may set them, and what a session's class shows
--
CREATE EXTENSION numasched;

-- a class is per session; what shapes the groups and the scheduler is not
SELECT name, context FROM pg_settings
  WHERE name IN ('numasched.enabled', 'numasched.parallel_placement', 'numasched.nodes',
                 'numasched.cpu_groups', 'numasched.spill', 'numasched.groups_per_node',
                 'numasched.rebalance_interval')
  ORDER BY name;
SET numasched.groups_per_node = 1;

-- accepted in a session
SET numasched.cpu_groups = '0';
SET numasched.spill = never;
SET numasched.nodes = '0';
SELECT current_setting('numasched.cpu_groups') AS cpu_groups,
       current_setting('numasched.spill') AS spill,
       current_setting('numasched.nodes') AS nodes;
-- the session is in its class from its next statement on
SELECT class_groups, spill FROM numasched_processes WHERE pid = pg_backend_pid();
RESET ALL;
SELECT spill, class_groups = (SELECT string_agg(cpu_group::text, ',' ORDER BY cpu_group)
                                FROM numasched_groups)
         OR class_groups ~ '-' AS every_group
  FROM numasched_processes WHERE pid = pg_backend_pid();

-- refused: what cannot be honoured on this machine, and what does not parse
SET numasched.cpu_groups = '8191';
SET numasched.cpu_groups = 'zero';
SET numasched.spill = sometimes;
SET numasched.nodes = '1023';

-- per role, per database, per role in a database: checked when set
CREATE ROLE numasched_reporting LOGIN;
ALTER ROLE numasched_reporting SET numasched.cpu_groups = '0';
ALTER ROLE numasched_reporting SET numasched.cpu_groups = '8191';
ALTER DATABASE :"DBNAME" SET numasched.spill = never;
ALTER ROLE numasched_reporting IN DATABASE :"DBNAME" SET numasched.nodes = '0';
SELECT coalesce(r.rolname, '(every role)') AS role, d.datname IS NOT NULL AS in_this_database,
       c.setting
  FROM pg_db_role_setting s
  LEFT JOIN pg_roles r ON r.oid = s.setrole
  LEFT JOIN pg_database d ON d.oid = s.setdatabase,
       unnest(s.setconfig) AS c(setting)
 WHERE c.setting LIKE 'numasched.%'
 ORDER BY 1, 2;

-- a role that is not a superuser needs a grant, per setting
SET ROLE numasched_reporting;
SET numasched.cpu_groups = '0';
RESET ROLE;
GRANT SET ON PARAMETER numasched.cpu_groups TO numasched_reporting;
SET ROLE numasched_reporting;
SET numasched.cpu_groups = '0';
SET numasched.spill = never;
RESET numasched.cpu_groups;
RESET ROLE;

-- numasched.enabled off lets the session go, on places it again
SET numasched.enabled = off;
SELECT count(*) AS placed FROM numasched_processes WHERE pid = pg_backend_pid();
RESET numasched.enabled;
SELECT count(*) AS placed FROM numasched_processes WHERE pid = pg_backend_pid();

-- per role and database at a glance
SELECT role, processes > 0 AS has_processes FROM numasched_workloads
 WHERE role = current_user AND database = current_database();

REVOKE SET ON PARAMETER numasched.cpu_groups FROM numasched_reporting;
ALTER DATABASE :"DBNAME" RESET numasched.spill;
ALTER ROLE numasched_reporting IN DATABASE :"DBNAME" RESET ALL;
DROP ROLE numasched_reporting;
DROP EXTENSION numasched;
