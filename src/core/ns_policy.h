/*
 * ns_policy.h - CPU groups, steal order, placement and rebalance
 * (ns_plan.c, ns_place.c, ns_rebalance.c)
 *
 * Part of the numasched core (no PostgreSQL header).  A plan is what
 * numasched derives from a topology and the settings: the CPU groups of each
 * node and every node's steal order.  Loads are kept by the caller (in
 * PostgreSQL's shared memory, or in the simulator) in flat arrays indexed by
 * group and node, so that they need no pointer to be shared.
 */
#ifndef NS_POLICY_H
#define NS_POLICY_H

#include "core/ns_topology.h"

#define NS_MAX_GROUPS_PER_NODE 1024

/* Load is counted in thousandths of a CPU; a new process weighs one CPU. */
#define NS_CPU_LOAD 1000
#define NS_DEFAULT_WEIGHT NS_CPU_LOAD

typedef struct ns_group
{
	int			node;			/* topology node index */
	int			ncpus;
	ns_cpuset	cpus;
} ns_group;

typedef struct ns_plan
{
	const ns_topology *topo;
	int			ngroups;
	ns_group   *groups;			/* grouped by node, nodes in id order */
	/* per topology node index; a node without groups has ngroups 0 */
	int		   *node_first_group;
	int		   *node_ngroups;
	int		   *node_ncpus;
	/* steal order: node_nsteal[n] nodes at steal[n * nnodes + ...] */
	int		   *node_nsteal;
	int		   *steal;
	/* hops[a * nnodes + b]: 0 same node, 1 nearest distance class, ... */
	uint8_t    *hops;

	/*
	 * The groups of a node share its CPUs (numasched.group_binding =
	 * preferred): a process may run on every CPU of its node in its class's
	 * groups, its own group being where it starts and what it is counted
	 * in.  No memory is nearer on one CPU of a node than on another, and
	 * the kernel gives waiting work an idle CPU of the node at once.  False
	 * (strict, and as built): bound to its group, lent the CPUs of another
	 * when it waits.
	 */
	bool		groups_share_node;

	/*
	 * And the nodes in a process's reach share theirs (numasched.node_binding
	 * = preferred, with groups_share_node): its group is where it starts,
	 * what it is counted in and where its memory is, and the kernel runs it
	 * on any CPU in reach when its own are busy.  False (strict, and as
	 * built): bound to its node, lent another's CPUs when it waits.
	 */
	bool		nodes_shared;
} ns_plan;

/*
 * Builds the plan.  groups_per_node 0 means one group per LLC domain where
 * sysfs has them, else one per node.  only_nodes (node ids), if not NULL,
 * limits the nodes used.  Returns NULL with a message on impossible input.
 */
ns_plan    *ns_plan_build(const ns_topology *topo, int groups_per_node,
						  const ns_cpuset *only_nodes, char *err, size_t errlen);
void		ns_plan_free(ns_plan *plan);

/* Loads per group and per node, in NS_CPU_LOAD units. */
typedef struct ns_loads
{
	uint32_t   *group;			/* ngroups */
	uint64_t   *node;			/* topology nnodes */
	int		   *node_room;		/* groups with room, per node */
} ns_loads;

/* Allocates zeroed loads for a plan (the simulator and tests use this). */
bool		ns_loads_alloc(const ns_plan *plan, ns_loads *loads);
void		ns_loads_free(ns_loads *loads);
void		ns_loads_reset(const ns_plan *plan, ns_loads *loads);
void		ns_loads_add(const ns_plan *plan, ns_loads *loads, int group, int64_t delta);

static inline bool
ns_group_has_room(const ns_plan *plan, const ns_loads *loads, int group)
{
	return loads->group[group] < (uint64_t) plan->groups[group].ncpus * NS_CPU_LOAD;
}

/* Is load a / cpus a below load b / cpus b? */
static inline bool
ns_less_loaded(uint64_t load_a, int cpus_a, uint64_t load_b, int cpus_b)
{
	return load_a * cpus_b < load_b * cpus_a;
}

/* Is group g in the set (NULL: every group)? */
static inline bool
ns_in_set(const ns_cpuset *set, int g)
{
	return set == NULL || ns_cpuset_test(set, g);
}

typedef enum ns_parallel_mode
{
	NS_PARALLEL_COMPACT,
	NS_PARALLEL_SPREAD
} ns_parallel_mode;

typedef struct ns_settings
{
	bool		prefer_previous;
	int			max_steal_distance; /* 0: no limit */
	ns_parallel_mode parallel;
	int			imbalance_threshold;	/* percent of one CPU, per CPU */
	int			max_moves;		/* per rebalance pass */
	int			cooldown_passes;	/* passes a moved process stays put */

	/*
	 * Move a process to another node only when it pays: its group has more
	 * work than CPUs (it waits for a CPU) and the other node's group has a
	 * CPU free for it.  A move between nodes leaves memory behind or costs
	 * its migration; between two groups that both have a CPU for everyone
	 * it buys no CPU time.  False: by the imbalance threshold alone.
	 */
	bool		cross_node_only_when_waiting;
} ns_settings;

void		ns_settings_default(ns_settings *settings);

/* May a process of node "from" go to node "to" (max_steal_distance)? */
static inline bool
ns_within_reach(const ns_plan *plan, const ns_settings *settings, int from, int to)
{
	return settings->max_steal_distance == 0 ||
		ns_distance(plan->topo, from, to) <= settings->max_steal_distance;
}

/*
 * The CPUs of every group in "reach" (NULL: all) on a node within reach of
 * node "home": where a background process may run.
 */
void		ns_reach_cpus(const ns_plan *plan, const ns_settings *settings, int home,
						  const ns_cpuset *reach, ns_cpuset *cpus);

/*
 * The CPUs a normal process of group g is bound to, nothing lent: g's own,
 * or where the groups of a node share its CPUs, those of every group of
 * g's node in "home" (NULL: all), g's among them.
 */
void		ns_home_cpus(const ns_plan *plan, int g, const ns_cpuset *home, ns_cpuset *cpus);

/*
 * The CPUs the kernel is told for a process of group g, nothing lent: its
 * reach (ns_reach_cpus) where it runs at background priority or under the
 * companion ("wide"); else its home CPUs (ns_home_cpus), and where the nodes
 * share their CPUs, those of the groups in "reach" on the other nodes within
 * reach.
 */
void		ns_bound_cpus(const ns_plan *plan, const ns_settings *settings, int g,
						  const ns_cpuset *home, const ns_cpuset *reach, bool wide, ns_cpuset *cpus);

typedef struct ns_request
{
	bool		parallel_worker;
	int			home_node;		/* node index, or -1: the least loaded node */
	int			previous_group; /* -1: none */
	int			leader_group;	/* parallel workers: the leader's group */
	int			worker_number;	/* parallel workers: 0, 1, ... */

	/*
	 * A workload class, as sets of group ids (NULL: every group): the groups
	 * it is placed in while one has room, and the groups it may spill to
	 * when none has (a superset of home_groups; equal to it: never spills).
	 */
	const ns_cpuset *home_groups;
	const ns_cpuset *reach_groups;

	/*
	 * The CPU the process runs on as it asks (-1: not known): where the
	 * nodes' loads tie, it stays on that CPU's node, where what it has
	 * allocated so far already is.
	 */
	int			running_cpu;
} ns_request;

typedef struct ns_placement
{
	int			group;
	int			node;			/* node index */
	int			home_node;		/* the node the request counted as home */
	int			hops;			/* 0 home, 1 nearest other class, ... */
} ns_placement;

/*
 * The least-loaded group of a node among "only" (NULL: all), room or not (-1:
 * the node has none).
 */
int			ns_least_loaded_group(const ns_plan *plan, const ns_loads *loads, int node,
								  const ns_cpuset *only);

/* The group holding "cpu", or -1. */
int			ns_group_of_cpu(const ns_plan *plan, int cpu);

/* Chooses a group.  Never fails while the plan has a group. */
void		ns_place(const ns_plan *plan, const ns_loads *loads,
					 const ns_settings *settings, const ns_request *request,
					 ns_placement *result);

/* A placed process as the rebalancer sees it. */
typedef struct ns_proc
{
	int			group;
	uint32_t	weight;			/* measured recent CPU use, NS_CPU_LOAD units */
	uint32_t	moved_pass;		/* pass of its last move; 0: never moved */
	int			keep_node;		/* -1, or a node index it must stay on */
	const ns_cpuset *allowed;	/* groups it may be moved to; NULL: any */
} ns_proc;

typedef struct ns_move
{
	int			proc;
	int			from_group;
	int			to_group;
	int			hops;
} ns_move;

/*
 * Proposes at most settings->max_moves moves (and at most max_moves_out)
 * from the busiest groups to idle groups, nearest nodes first.  "pass" must
 * grow by one per call and start at 1.  Updates procs[].group and
 * moved_pass for the moves it proposes.  Returns the number of moves.
 */
int			ns_rebalance(const ns_plan *plan, const ns_settings *settings,
						 ns_proc *procs, int nprocs, uint32_t pass,
						 ns_move *moves, int max_moves_out);

#endif							/* NS_POLICY_H */
