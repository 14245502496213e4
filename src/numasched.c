/*
 * numasched.c - PostgreSQL glue: settings and module load
 *
 * The settings of DESIGN.md with their check hooks.  Validation that depends
 * on the machine (how many CPUs a node has, which nodes exist) is the core's:
 * the hooks build a plan with the new value and report the core's reason.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "ns_policy.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

typedef enum memory_policy_kind
{
	MEMORY_POLICY_NONE,
	MEMORY_POLICY_PREFERRED,
	MEMORY_POLICY_BIND
} memory_policy_kind;

typedef enum shared_memory_kind
{
	SHARED_MEMORY_DEFAULT,
	SHARED_MEMORY_INTERLEAVE
} shared_memory_kind;

static const struct config_enum_entry parallel_placement_options[] = {
	{"compact", NS_PARALLEL_COMPACT, false},
	{"spread", NS_PARALLEL_SPREAD, false},
	{NULL, 0, false}
};

static const struct config_enum_entry memory_policy_options[] = {
	{"none", MEMORY_POLICY_NONE, false},
	{"preferred", MEMORY_POLICY_PREFERRED, false},
	{"bind", MEMORY_POLICY_BIND, false},
	{NULL, 0, false}
};

static const struct config_enum_entry shared_memory_options[] = {
	{"default", SHARED_MEMORY_DEFAULT, false},
	{"interleave", SHARED_MEMORY_INTERLEAVE, false},
	{NULL, 0, false}
};

/* settings */
static bool numasched_enabled = true;
static int	numasched_groups_per_node = 0;
static int	numasched_parallel_placement = NS_PARALLEL_COMPACT;
static bool numasched_prefer_previous = true;
static int	numasched_max_steal_distance = 0;
static int	numasched_memory_policy = MEMORY_POLICY_PREFERRED;
static int	numasched_shared_memory = SHARED_MEMORY_DEFAULT;
static int	numasched_rebalance_interval = 1000;
static int	numasched_imbalance_threshold = 25;
static bool numasched_migrate_memory = false;
static char *numasched_nodes = NULL;
static bool numasched_log_placements = false;

/* The topology, read once by the postmaster and inherited by every child. */
static ns_topology *machine = NULL;

/*
 * Turns one of the core's messages ("node 5 does not exist") into a detail
 * sentence ("Node 5 does not exist.").
 */
static void
check_detail_from_core(const char *err)
{
	GUC_check_errdetail("%c%s.", pg_toupper((unsigned char) err[0]), err + 1);
}

/* Can a plan be built from these values on this machine? */
static bool
plan_would_build(int groups_per_node, const char *nodes_text)
{
	ns_cpuset	nodes;
	ns_plan    *plan;
	char		err[NS_ERRLEN];

	if (machine == NULL)
		return true;			/* not preloaded: nothing to check against */
	if (nodes_text && nodes_text[0] &&
		!ns_cpuset_parse(nodes_text, strlen(nodes_text), NS_MAX_NODES, &nodes, err, sizeof(err)))
		return true;			/* the list itself is checked by its own hook */
	plan = ns_plan_build(machine, groups_per_node,
						 nodes_text && nodes_text[0] ? &nodes : NULL, err, sizeof(err));
	if (plan == NULL)
	{
		check_detail_from_core(err);
		return false;
	}
	ns_plan_free(plan);
	return true;
}

static bool
check_groups_per_node(int *newval, void **extra, GucSource source)
{
	return plan_would_build(*newval, numasched_nodes);
}

static bool
check_max_steal_distance(int *newval, void **extra, GucSource source)
{
	if (*newval != 0 && *newval < NS_LOCAL_DISTANCE)
	{
		GUC_check_errdetail("numasched.max_steal_distance must be 0 (no limit) or a SLIT distance from %d to 255.",
							NS_LOCAL_DISTANCE);
		return false;
	}
	return true;
}

static bool
check_nodes(char **newval, void **extra, GucSource source)
{
	ns_cpuset	nodes;
	char		err[NS_ERRLEN];
	const char *text = *newval ? *newval : "";

	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_NODES, &nodes, err, sizeof(err)))
	{
		GUC_check_errdetail("numasched.nodes must be empty (all nodes) or a list of node ids like \"0-1,3\": %s.",
							err);
		return false;
	}
	return plan_would_build(numasched_groups_per_node, text);
}

/* Reads the machine's topology for this process and its children. */
static void
load_machine(void)
{
	ns_cpuset	cpus,
				mems;
	ns_limits	limits = {&cpus, &mems};
	char		err[NS_ERRLEN];

	if (!ns_process_limits(&cpus, &mems, err, sizeof(err)) ||
		(machine = ns_topology_load("/sys", &limits, err, sizeof(err))) == NULL)
		ereport(WARNING,
				(errmsg("numasched could not read the NUMA topology, processes will not be placed"),
				 errdetail("%c%s.", pg_toupper((unsigned char) err[0]), err + 1)));
}

void
_PG_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		load_machine();

	DefineCustomBoolVariable("numasched.enabled",
							 "Places new backends and parallel workers on NUMA nodes and CPU groups.",
							 NULL, &numasched_enabled, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("numasched.groups_per_node",
							"Number of CPU groups each NUMA node is split into; 0 means one per last-level cache, else one per node.",
							NULL, &numasched_groups_per_node, 0, 0, NS_MAX_GROUPS_PER_NODE,
							PGC_SIGHUP, 0, check_groups_per_node, NULL, NULL);

	DefineCustomEnumVariable("numasched.parallel_placement",
							 "Where parallel workers go: compact fills their leader's node first, spread spreads them over the nearest nodes.",
							 NULL, &numasched_parallel_placement, NS_PARALLEL_COMPACT,
							 parallel_placement_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("numasched.prefer_previous",
							 "Keeps a process in its previous CPU group while that group has room.",
							 NULL, &numasched_prefer_previous, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("numasched.max_steal_distance",
							"Largest SLIT distance a process may be placed or moved away from its home node; 0 means no limit.",
							NULL, &numasched_max_steal_distance, 0, 0, 255,
							PGC_SIGHUP, 0, check_max_steal_distance, NULL, NULL);

	DefineCustomEnumVariable("numasched.memory_policy",
							 "Memory policy of a placed process: none, preferred (its node first) or bind (its node only).",
							 NULL, &numasched_memory_policy, MEMORY_POLICY_PREFERRED,
							 memory_policy_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("numasched.rebalance_interval",
							"Time between two passes of the scheduler worker; 0 turns rebalancing off.",
							NULL, &numasched_rebalance_interval, 1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("numasched.imbalance_threshold",
							"Difference in load per CPU, in percent of one CPU, between two groups above which the scheduler moves work.",
							NULL, &numasched_imbalance_threshold, 25, 1, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("numasched.migrate_memory",
							 "Moves a process's memory pages along when the scheduler moves it to another node.",
							 NULL, &numasched_migrate_memory, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("numasched.nodes",
							   "NUMA nodes numasched may use, as a list like \"0-1,3\"; empty means all nodes.",
							   NULL, &numasched_nodes, "",
							   PGC_SIGHUP, 0, check_nodes, NULL, NULL);

	DefineCustomBoolVariable("numasched.log_placements",
							 "Logs every placement and move.",
							 NULL, &numasched_log_placements, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	if (process_shared_preload_libraries_in_progress)
		DefineCustomEnumVariable("numasched.shared_memory",
								 "Placement of the main shared memory segment: default, or interleave over the usable nodes.",
								 NULL, &numasched_shared_memory, SHARED_MEMORY_DEFAULT,
								 shared_memory_options,
								 PGC_POSTMASTER, 0, NULL, NULL, NULL);

	MarkGUCPrefixReserved("numasched");
}
