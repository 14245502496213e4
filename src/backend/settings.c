/*
 * settings.c - PostgreSQL glue: the settings and the machine they are
 * checked against
 *
 * The settings of DESIGN.md with their check hooks.  Validation that depends
 * on the machine (how many CPUs a node has, which nodes exist) is the core's:
 * the hooks build a plan with the new value and report the core's reason.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "backend/settings.h"

ns_topology *numasched_machine = NULL;

static const struct config_enum_entry parallel_placement_options[] = {
	{"compact", NS_PARALLEL_COMPACT, false},
	{"spread", NS_PARALLEL_SPREAD, false},
	{NULL, 0, false}
};

static const struct config_enum_entry memory_policy_options[] = {
	{"none", NS_MEMORY_NONE, false},
	{"local", NS_MEMORY_LOCAL, false},
	{"preferred", NS_MEMORY_PREFERRED, false},
	{"bind", NS_MEMORY_BIND, false},
	{NULL, 0, false}
};

static const struct config_enum_entry cross_node_options[] = {
	{"when_waiting", CROSS_NODE_WHEN_WAITING, false},
	{"by_imbalance", CROSS_NODE_BY_IMBALANCE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry spill_options[] = {
	{"nearest", SPILL_NEAREST, false},
	{"never", SPILL_NEVER, false},
	{NULL, 0, false}
};

static const struct config_enum_entry cpu_priority_options[] = {
	{"normal", CPU_PRIORITY_NORMAL, false},
	{"background", CPU_PRIORITY_BACKGROUND, false},
	{NULL, 0, false}
};

static const struct config_enum_entry inject_fault_options[] = {
	{"none", FAULT_NONE, false},
	{"out_of_memory", FAULT_OUT_OF_MEMORY, false},
	{"error_under_lock", FAULT_ERROR_UNDER_LOCK, false},
	{NULL, 0, false}
};

static const struct config_enum_entry group_binding_options[] = {
	{"preferred", GROUP_BINDING_PREFERRED, false},
	{"strict", GROUP_BINDING_STRICT, false},
	{NULL, 0, false}
};

static const struct config_enum_entry node_binding_options[] = {
	{"preferred", NODE_BINDING_PREFERRED, false},
	{"strict", NODE_BINDING_STRICT, false},
	{NULL, 0, false}
};

static const struct config_enum_entry shared_memory_options[] = {
	{"default", SHARED_MEMORY_DEFAULT, false},
	{"interleave", SHARED_MEMORY_INTERLEAVE, false},
	{NULL, 0, false}
};

/* settings */
bool		numasched_enabled = true;
int			numasched_groups_per_node = 1;
int			numasched_group_binding = GROUP_BINDING_PREFERRED;
int			numasched_node_binding = NODE_BINDING_PREFERRED;
int			numasched_parallel_placement = NS_PARALLEL_COMPACT;
int			numasched_max_steal_distance = 0;
int			numasched_memory_policy = NS_MEMORY_LOCAL;
int			numasched_shared_memory = SHARED_MEMORY_DEFAULT;
int			numasched_rebalance_interval = 1000;
int			numasched_imbalance_threshold = 25;
int			numasched_cross_node_moves = CROSS_NODE_WHEN_WAITING;
bool		numasched_migrate_memory = true;
bool		numasched_lend_idle_cpus = true;
bool		numasched_lend_at_start = true;
bool		numasched_copy_inherited_pages = true;
char	   *numasched_nodes = NULL;
char	   *numasched_cpu_groups = NULL;
int			numasched_spill = SPILL_NEAREST;
int			numasched_cpu_priority = CPU_PRIORITY_NORMAL;
bool		numasched_class_changed = false;
/* statement_lending.c's, forgotten here by the settings that turn counting on or off */
uint32		numasched_lend_plan_generation = PG_UINT32_MAX;
bool		numasched_in_set_statement = false;
char	   *numasched_interleave_nodes_list = NULL;
bool		numasched_log_placements = false;
int			numasched_inject_fault = FAULT_NONE;
numasched_priority_way numasched_background_way = PRIORITY_BY_SCHED_IDLE;
/* on the heap: 8 kB of paths in the library's data would put its variables on more pages */
ns_cgroup_dirs *numasched_cgroup_dirs = NULL;

/*
 * Turns one of the core's messages ("node 5 does not exist") into a detail
 * sentence ("Node 5 does not exist.").
 */
static void
check_detail_from_core(const char *err)
{
	GUC_check_errdetail("%c%s.", pg_toupper((unsigned char) err[0]), err + 1);
}

/*
 * Can a plan be built from these values on this machine?  If not, "err" says
 * why.  A list that does not parse counts as buildable: its own hook says so.
 */
static bool
plan_builds(int groups_per_node, const char *nodes_text, char *err, size_t errlen)
{
	ns_cpuset	nodes;
	ns_plan    *plan;

	if (numasched_machine == NULL)
		return true;			/* not preloaded: nothing to check against */
	if (nodes_text[0] &&
		!ns_cpuset_parse(nodes_text, strlen(nodes_text), NS_MAX_NODES, &nodes, err, errlen))
		return true;
	plan = ns_plan_build(numasched_machine, groups_per_node,
						 nodes_text[0] ? &nodes : NULL, err, errlen);
	if (plan == NULL)
		return false;
	ns_plan_free(plan);
	return true;
}

/*
 * Can a session with these numasched.nodes and numasched.cpu_groups be
 * placed in the groups of numasched.groups_per_node (the server-wide
 * setting; one group per node if it does not fit)?  If not,
 * "err" says why.
 */
static bool
class_fits(const char *nodes_text, const char *groups_text, char *err, size_t errlen)
{
	ns_cpuset	nodes,
				groups;
	ns_plan    *plan;
	int			g;
	bool		on_nodes = false;

	if (numasched_machine == NULL || groups_text[0] == '\0' ||
		!ns_cpuset_parse(groups_text, strlen(groups_text), NS_MAX_CPUS, &groups, err, errlen) ||
		(nodes_text[0] &&
		 !ns_cpuset_parse(nodes_text, strlen(nodes_text), NS_MAX_NODES, &nodes, err, errlen)))
		return true;
	plan = ns_plan_build(numasched_machine, numasched_groups_per_node, NULL, err, errlen);
	if (plan == NULL && (plan = ns_plan_build(numasched_machine, 1, NULL, err, errlen)) == NULL)
		return true;
	NS_CPUSET_FOREACH(g, &groups)
	{
		if (g >= plan->ngroups)
		{
			snprintf(err, errlen, "CPU group %d does not exist (the view numasched_groups lists them)", g);
			ns_plan_free(plan);
			return false;
		}
		on_nodes |= nodes_text[0] == '\0' ||
			ns_cpuset_test(&nodes, numasched_machine->nodes[plan->groups[g].node].id);
	}
	ns_plan_free(plan);
	if (!on_nodes)
		snprintf(err, errlen, "none of the CPU groups %s is on numasched.nodes (%s)", groups_text, nodes_text);
	return on_nodes;
}

/*
 * The groups cover every node with usable CPUs (numasched.nodes is a
 * session's, not the groups'): a number of groups is valid if every such
 * node can be split that way.
 */
static bool
check_groups_per_node(int *newval, void **extra, GucSource source)
{
	char		err[NS_ERRLEN];

	if (plan_builds(*newval, "", err, sizeof(err)))
		return true;
	check_detail_from_core(err);
	return false;
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

	if (strlen(text) >= NUMASCHED_NODES_LEN)
	{
		GUC_check_errdetail("numasched.nodes must be shorter than %d characters.", NUMASCHED_NODES_LEN);
		return false;
	}
	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_NODES, &nodes, err, sizeof(err)))
	{
		GUC_check_errdetail("numasched.nodes must be empty (all nodes) or a list of node ids like \"0-1,3\": %s.",
							err);
		return false;
	}
	/* the nodes exist and have CPUs (one group per node fits any) */
	if (!plan_builds(1, text, err, sizeof(err)))
	{
		check_detail_from_core(err);
		return false;
	}
	return true;
}

/*
 * A list of CPU group ids, of the groups numasched.groups_per_node makes now.
 * Checked when set in a session, with ALTER ROLE/DATABASE SET, and when a
 * role's or database's value is applied at login (where PostgreSQL turns a
 * refusal into a WARNING and keeps the server-wide value), not when read
 * from the configuration file: a reload that also changes groups_per_node
 * may check it before the new groups exist.  Whether the groups are on the
 * session's numasched.nodes is checked for a SET statement only (set the
 * nodes first): elsewhere the nodes the session will have are not known.  A
 * pair that does not fit is no error anywhere else: the class uses every
 * group of its nodes, with a WARNING.  A parallel worker, a function's SET
 * clause and set_config() check nothing more than the syntax: a regroup must
 * not break a function whose clause named a group that is gone.
 */
static bool
check_cpu_groups(char **newval, void **extra, GucSource source)
{
	ns_cpuset	groups;
	char		err[NS_ERRLEN];
	const char *text = *newval ? *newval : "";

	if (strlen(text) >= NUMASCHED_GROUPS_LEN)
	{
		GUC_check_errdetail("numasched.cpu_groups must be shorter than %d characters.", NUMASCHED_GROUPS_LEN);
		return false;
	}
	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_CPUS, &groups, err, sizeof(err)))
	{
		GUC_check_errdetail("numasched.cpu_groups must be empty (every group of numasched.nodes) or a list of CPU group ids like \"0-1,3\": %s.",
							err);
		return false;
	}
	/*
	 * A parallel worker receives its leader's values, checked there, in an
	 * order of PostgreSQL's own, after numasched.groups_per_node was reset:
	 * refusing one would fail the leader's query.
	 */
	if (source == PGC_S_FILE || source == PGC_S_DEFAULT || InitializingParallelWorker ||
		(source == PGC_S_SESSION && !numasched_in_set_statement))
		return true;
	if (!class_fits(source == PGC_S_SESSION && numasched_nodes ? numasched_nodes : "",
					text, err, sizeof(err)))
	{
		check_detail_from_core(err);
		return false;
	}
	return true;
}

/*
 * A class setting that changes moves the session at its next statement.
 * The variable still holds the old value here; a reload calls these for
 * every setting in the file, changed or not.
 */
static bool
text_changed(const char *newval, const char *oldval)
{
	return strcmp(newval ? newval : "", oldval ? oldval : "") != 0;
}

static void
assign_nodes(const char *newval, void *extra)
{
	numasched_class_changed |= text_changed(newval, numasched_nodes);
}

static void
assign_cpu_groups(const char *newval, void *extra)
{
	numasched_class_changed |= text_changed(newval, numasched_cpu_groups);
}

static void
assign_spill(int newval, void *extra)
{
	numasched_class_changed |= newval != numasched_spill;
}

/*
 * A SET back to normal in a session that runs at background priority, where
 * the kernel would refuse to raise it, is refused here with what to do;
 * asked of the kernel, not of our books.  Elsewhere (a reload, a role's
 * value, the end of a SET LOCAL) the session simply stays background.
 */
static bool
check_cpu_priority(int *newval, void **extra, GucSource source)
{
	char		why[NS_ERRLEN];

	if (*newval != CPU_PRIORITY_NORMAL || source != PGC_S_SESSION || !numasched_in_set_statement)
		return true;
	/* SCHED_IDLE, or under the sched_ext companion its own nice 19 */
	if (!(numasched_background_way == PRIORITY_BY_SCHED_IDLE && ns_is_background(0) == 1) &&
		!(ns_is_sched_ext(0) == 1 && ns_own_nice(0) > 0))
		return true;
	if (ns_may_raise_priority(why, sizeof(why)))
		return true;
	GUC_check_errmsg("numasched cannot give this session normal CPU priority back");
	GUC_check_errdetail("The kernel lets a process lower its priority but not raise it again: %s.", why);
	GUC_check_errhint("Open a new session for normal work, or let the server raise priorities: LimitNICE=+0 in its systemd unit (RLIMIT_NICE 20), or AmbientCapabilities=CAP_SYS_NICE.");
	return false;
}

static void
assign_cpu_priority(int newval, void *extra)
{
	numasched_class_changed |= newval != numasched_cpu_priority;
}

static void
assign_parallel_placement(int newval, void *extra)
{
	numasched_class_changed |= newval != numasched_parallel_placement;
}

static void
assign_enabled(bool newval, void *extra)
{
	numasched_class_changed |= newval != numasched_enabled;
	numasched_forget_lend_plan();
}

/* lend_idle_cpus, lend_at_start: whether statements are counted */
static void
assign_lending(bool newval, void *extra)
{
	numasched_forget_lend_plan();
}

/* Nodes whose memory we may use and that have some. */
static bool
check_interleave_nodes(char **newval, void **extra, GucSource source)
{
	ns_cpuset	nodes;
	char		err[NS_ERRLEN];
	const char *text = *newval ? *newval : "";
	int			id;

	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_NODES, &nodes, err, sizeof(err)))
	{
		GUC_check_errdetail("numasched.interleave_nodes must be empty (the nodes with CPUs) or a list of node ids like \"0-1,3\": %s.",
							err);
		return false;
	}
	if (numasched_machine == NULL)
		return true;			/* nothing to check against */
	NS_CPUSET_FOREACH(id, &nodes)
	{
		int			n = ns_topology_node_index(numasched_machine, id);

		if (n < 0 || !numasched_machine->nodes[n].memory_allowed)
		{
			GUC_check_errdetail("Node %d does not exist or its memory is not allowed here.", id);
			return false;
		}
		if (numasched_machine->nodes[n].memory_kb == 0)
		{
			GUC_check_errdetail("Node %d has no memory.", id);
			return false;
		}
	}
	return true;
}

/* Reads the machine's topology for this process and its children. */
void
numasched_load_machine(void)
{
	ns_cpuset	cpus,
				mems;
	ns_limits	limits = {&cpus, &mems};
	char		err[NS_ERRLEN];

	if (!ns_process_limits(&cpus, &mems, err, sizeof(err)) ||
		(numasched_machine = ns_topology_load("/sys", &limits, err, sizeof(err))) == NULL)
		ereport(WARNING,
				(errmsg("numasched could not read the NUMA topology, processes will not be placed"),
				 errdetail_from_core(err)));
}

void
numasched_probe_priority(void)
{
	char		why[NS_ERRLEN];
	char		no_cgroup[NS_ERRLEN];
	ns_cgroup_dirs *dirs = MemoryContextAllocZero(TopMemoryContext, sizeof(ns_cgroup_dirs));

	if (ns_cgroup_prepare(dirs, no_cgroup, sizeof(no_cgroup)))
	{
		numasched_cgroup_dirs = dirs;
		numasched_background_way = PRIORITY_BY_CGROUP;
		ereport(LOG,
				(errmsg("numasched gives background processes the idle cpu cgroup %s here",
						numasched_cgroup_dirs->background),
				 errdetail("Its cpu.idle is 1: they run where normal processes leave a CPU idle, and go back to normal by moving to %s.",
						   numasched_cgroup_dirs->normal)));
		return;
	}
	pfree(dirs);
	numasched_background_way = ns_autogroups_apply() ? PRIORITY_BY_AUTOGROUP : PRIORITY_BY_SCHED_IDLE;
	if (numasched_background_way == PRIORITY_BY_AUTOGROUP)
		ereport(LOG,
				(errmsg("numasched gives background processes nice 19 for their autogroups here"),
				 errdetail("Each PostgreSQL process is an autogroup of its own outside any cpu cgroup, and the kernel shares the CPU between autogroups by their nice value, which it lets change ten times a second machine-wide: a parallel worker of a background query may run at a normal share until its turn comes."),
				 errhint("Given a cpu cgroup of its own to change (Delegate=yes in its systemd unit; here %s), the server puts background processes in an idle cpu cgroup instead, at once.", no_cgroup)));
	else if (!ns_may_raise_priority(why, sizeof(why)))
		ereport(LOG,
				(errmsg("numasched.cpu_priority = background lasts for a session's life here"),
				 errdetail_from_core(why),
				 errhint("To let a session go back to normal, and a lock holder leave SCHED_IDLE while normal sessions wait for it, give the server a cpu cgroup of its own to change (Delegate=yes in its systemd unit; here %s), LimitNICE=+0 (RLIMIT_NICE 20), or AmbientCapabilities=CAP_SYS_NICE.", no_cgroup)));
}

/* The scheduler worker's settings: its passes, its moves, its lending. */
static void
define_scheduler_settings(void)
{
	DefineCustomIntVariable("numasched.rebalance_interval",
							"Time between two passes of the scheduler worker; 0 turns rebalancing off.",
							NULL, &numasched_rebalance_interval, 1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("numasched.imbalance_threshold",
							"Difference in load per CPU, in percent of one CPU, between two groups above which the scheduler moves work.",
							NULL, &numasched_imbalance_threshold, 25, 1, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("numasched.cross_node_moves",
							 "When the scheduler moves a process to another node: when_waiting (its group has more work than CPUs and the other node a free CPU), or by_imbalance (by numasched.imbalance_threshold alone, as within a node).",
							 NULL, &numasched_cross_node_moves, CROSS_NODE_WHEN_WAITING,
							 cross_node_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("numasched.migrate_memory",
							 "Moves a process's private memory along when it is moved to another node.",
							 NULL, &numasched_migrate_memory, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("numasched.lend_idle_cpus",
							 "Lets the processes of a CPU group whose work waits run on the idle CPUs of the nearest group in reach until the burst is over.",
							 NULL, &numasched_lend_idle_cpus, true,
							 PGC_SIGHUP, 0, NULL, assign_lending, NULL);

	DefineCustomBoolVariable("numasched.lend_at_start",
							 "Lends a statement that starts while every CPU of its group runs one an idle CPU of the nearest group in reach.",
							 NULL, &numasched_lend_at_start, true,
							 PGC_SIGHUP, 0, NULL, assign_lending, NULL);
}

/* Defines the numasched.* settings (the postmaster-only ones when preloaded). */
void
numasched_define_settings(void)
{
	/*
	 * A workload class (enabled, parallel_placement, nodes, cpu_groups,
	 * spill, cpu_priority) can be set per role and database and in a session; what shapes
	 * the groups and the scheduler stays server-wide.
	 */
	DefineCustomBoolVariable("numasched.enabled",
							 "Places new backends and parallel workers on NUMA nodes and CPU groups.",
							 NULL, &numasched_enabled, true,
							 PGC_SUSET, 0, NULL, assign_enabled, NULL);

	DefineCustomIntVariable("numasched.groups_per_node",
							"Number of CPU groups each NUMA node is split into; 0 means one per last-level cache.",
							NULL, &numasched_groups_per_node, 1, 0, NS_MAX_GROUPS_PER_NODE,
							PGC_SIGHUP, 0, check_groups_per_node, NULL, NULL);

	DefineCustomEnumVariable("numasched.group_binding",
							 "How a process is bound inside its node: preferred (every CPU of its node in its class's groups, starting in its own group) or strict (its group's CPUs, lent another group's while it waits).",
							 NULL, &numasched_group_binding, GROUP_BINDING_PREFERRED,
							 group_binding_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("numasched.node_binding",
							 "How a process is bound to its node: preferred (every CPU of the nodes in its reach, starting on its own node, its memory there and brought back when its node has an idle CPU) or strict (its node's CPUs, lent another node's while it waits). Preferred takes effect with numasched.group_binding = preferred.",
							 NULL, &numasched_node_binding, NODE_BINDING_PREFERRED,
							 node_binding_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("numasched.parallel_placement",
							 "Where parallel workers go: compact fills their leader's node first, spread spreads them over the nearest nodes.",
							 NULL, &numasched_parallel_placement, NS_PARALLEL_COMPACT,
							 parallel_placement_options,
							 PGC_SUSET, 0, NULL, assign_parallel_placement, NULL);

	DefineCustomIntVariable("numasched.max_steal_distance",
							"Largest SLIT distance a process may be placed or moved away from its home node; 0 means no limit.",
							NULL, &numasched_max_steal_distance, 0, 0, 255,
							PGC_SIGHUP, 0, check_max_steal_distance, NULL, NULL);

	DefineCustomEnumVariable("numasched.memory_policy",
							 "Memory of a placed process: local (the node it runs on, its pages brought there), preferred (its node first), bind (its node only) or none (left alone).",
							 NULL, &numasched_memory_policy, NS_MEMORY_LOCAL,
							 memory_policy_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	define_scheduler_settings();

	DefineCustomBoolVariable("numasched.copy_inherited_pages",
							 "Gives a placed process its own copy, on its node, of the postmaster's pages it still shares copy-on-write from another node.",
							 NULL, &numasched_copy_inherited_pages, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("numasched.nodes",
							   "NUMA nodes a session may run on, as a list like \"0-1,3\"; empty means all nodes.",
							   NULL, &numasched_nodes, "",
							   PGC_SUSET, 0, check_nodes, assign_nodes, NULL);

	DefineCustomStringVariable("numasched.cpu_groups",
							   "CPU groups (numasched_groups.cpu_group) a session is placed in, as a list like \"0-1,3\"; empty means every group of numasched.nodes.",
							   NULL, &numasched_cpu_groups, "",
							   PGC_SUSET, 0, check_cpu_groups, assign_cpu_groups, NULL);

	DefineCustomEnumVariable("numasched.spill",
							 "When the CPU groups of a session are full: nearest places it in the nearest group with room on numasched.nodes, never keeps it in its groups.",
							 NULL, &numasched_spill, SPILL_NEAREST, spill_options,
							 PGC_SUSET, 0, NULL, assign_spill, NULL);

	DefineCustomEnumVariable("numasched.cpu_priority",
							 "CPU priority of a session and its parallel workers: background runs on every idle CPU in reach of its class, below every normal session, and keeps its memory home.",
							 NULL, &numasched_cpu_priority, CPU_PRIORITY_NORMAL, cpu_priority_options,
							 PGC_SUSET, 0, check_cpu_priority, assign_cpu_priority, NULL);

	DefineCustomBoolVariable("numasched.log_placements",
							 "Logs every placement and move.",
							 NULL, &numasched_log_placements, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);

	/* for the tests: a failure where one is possible, and what it leaves behind */
	DefineCustomEnumVariable("numasched.inject_fault",
							 "Fails this session's next decisions on purpose (testing only).",
							 "out_of_memory: the room for a decision cannot be allocated; "
							 "error_under_lock: an ERROR with numasched's lock held.",
							 &numasched_inject_fault, FAULT_NONE, inject_fault_options,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomEnumVariable("numasched.shared_memory",
								 "Placement of the main shared memory segment: default, or interleave over numasched.interleave_nodes.",
								 NULL, &numasched_shared_memory, SHARED_MEMORY_DEFAULT,
								 shared_memory_options,
								 PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomStringVariable("numasched.interleave_nodes",
								   "NUMA nodes shared memory is interleaved over, as a list like \"0-1,3\"; empty means the nodes with CPUs.",
								   NULL, &numasched_interleave_nodes_list, "",
								   PGC_POSTMASTER, 0, check_interleave_nodes, NULL, NULL);
	}

	MarkGUCPrefixReserved("numasched");
}

/* The settings the core's placement and rebalancing read. */
void
numasched_settings(ns_settings *settings)
{
	ns_settings_default(settings);
	/* no previous group is ever asked for: a process is placed once */
	settings->max_steal_distance = numasched_max_steal_distance;
	settings->parallel = numasched_parallel_placement;
	settings->imbalance_threshold = numasched_imbalance_threshold;
	settings->cross_node_only_when_waiting = numasched_cross_node_moves == CROSS_NODE_WHEN_WAITING;
}
