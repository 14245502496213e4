/*
 * ns_policy.c - CPU groups, steal order, placement and rebalance
 *
 * Placement follows DESIGN.md: the previous group while it has room (cache
 * warmth, as scx_prev does), then the least-loaded group on the home node,
 * then the nearest node with room in steal order up to the maximum steal
 * distance, and when everything is full the least-loaded group weighted by
 * distance.  Relative loads are compared by cross-multiplying, so the hot
 * path has no division.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* CPU_ALLOC, qsort_r */
#endif
#include "ns_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ns_settings_default(ns_settings *settings)
{
	settings->prefer_previous = true;
	settings->max_steal_distance = 0;
	settings->parallel = NS_PARALLEL_COMPACT;
	settings->imbalance_threshold = 25;
	settings->max_moves = 8;
	settings->cooldown_passes = 5;
	settings->cross_node_only_when_waiting = true;
}

void
ns_plan_free(ns_plan *plan)
{
	if (plan == NULL)
		return;
	free(plan->groups);
	free(plan->node_first_group);
	free(plan->node_ngroups);
	free(plan->node_ncpus);
	free(plan->node_nsteal);
	free(plan->steal);
	free(plan->hops);
	free(plan);
}

/* Sort key of the steal order: distance, then node index. */
typedef struct steal_key
{
	int			node;
	int			distance;
} steal_key;

static int
compare_steal_key(const void *a, const void *b)
{
	const steal_key *x = a,
			   *y = b;

	if (x->distance != y->distance)
		return x->distance - y->distance;
	return x->node - y->node;
}

/*
 * Rotates each run of equally distant nodes by "offset", so that the nodes
 * asking do not all ask the same node of the run first.
 */
static void
rotate_ties(steal_key *keys, int nkeys, int offset)
{
	steal_key	run[NS_MAX_NODES];

	for (int start = 0; start < nkeys;)
	{
		int			end = start;

		while (end < nkeys && keys[end].distance == keys[start].distance)
			end++;
		for (int k = 0; k < end - start; k++)
			run[k] = keys[start + (k + offset) % (end - start)];
		memcpy(keys + start, run, (end - start) * sizeof(steal_key));
		start = end;
	}
}

/* Appends one group of "cpus" to the plan. */
static void
add_group(ns_plan *plan, int node, const ns_cpuset *cpus)
{
	ns_group   *group = &plan->groups[plan->ngroups++];

	group->node = node;
	group->cpus = *cpus;
	group->ncpus = ns_cpuset_count(cpus);
}

/*
 * Splits a node's CPUs into "count" groups, contiguous in CPU order and as
 * even as possible.  SMT siblings stay together while there are at least as
 * many cores as groups: splitting a core would make two groups share its
 * caches.
 */
static bool
split_node(ns_plan *plan, int node_index, int count)
{
	const ns_topology *topo = plan->topo;
	const ns_node *node = &topo->nodes[node_index];
	int		   *unit_of_cpu = malloc(NS_MAX_CPUS * sizeof(int));
	int		   *unit_of_leader = malloc(NS_MAX_CPUS * sizeof(int));
	int			nunits = 0;
	int			cpu;

	if (unit_of_cpu == NULL || unit_of_leader == NULL)
	{
		free(unit_of_cpu);
		free(unit_of_leader);
		return false;
	}

	/*
	 * A unit is a core: the node's CPUs that share a core leader, numbered in
	 * CPU order.  The key is looked up per node, so a sibling list that
	 * (wrongly) spans nodes still gives every CPU exactly one group.
	 */
	for (int i = 0; i < NS_MAX_CPUS; i++)
		unit_of_leader[i] = -1;
	NS_CPUSET_FOREACH(cpu, &node->cpus)
	{
		int			lead = topo->core_leader[cpu];

		if (unit_of_leader[lead] < 0)
			unit_of_leader[lead] = nunits++;
		unit_of_cpu[cpu] = unit_of_leader[lead];
	}
	if (nunits < count)
	{
		/* fewer cores than groups: split by CPU */
		nunits = 0;
		NS_CPUSET_FOREACH(cpu, &node->cpus)
			unit_of_cpu[cpu] = nunits++;
	}
	for (int g = 0; g < count; g++)
	{
		int			first = (int) ((long) g * nunits / count);
		int			end = (int) ((long) (g + 1) * nunits / count);
		ns_cpuset	cpus;

		ns_cpuset_zero(&cpus);
		NS_CPUSET_FOREACH(cpu, &node->cpus)
		{
			if (unit_of_cpu[cpu] >= first && unit_of_cpu[cpu] < end)
				ns_cpuset_set(&cpus, cpu);
		}
		add_group(plan, node_index, &cpus);
	}
	free(unit_of_cpu);
	free(unit_of_leader);
	return true;
}

/* One group per LLC domain of the node, in order of their lowest CPU. */
static void
split_node_by_llc(ns_plan *plan, int node_index)
{
	const ns_topology *topo = plan->topo;
	const ns_node *node = &topo->nodes[node_index];
	ns_cpuset	done;
	int			cpu;

	ns_cpuset_zero(&done);
	NS_CPUSET_FOREACH(cpu, &node->cpus)
	{
		ns_cpuset	domain;
		int			member;

		if (ns_cpuset_test(&done, cpu))
			continue;
		ns_cpuset_zero(&domain);
		NS_CPUSET_FOREACH(member, &node->cpus)
		{
			if (topo->llc_leader[member] == topo->llc_leader[cpu])
				ns_cpuset_set(&domain, member);
		}
		ns_cpuset_or(&done, &done, &domain);
		add_group(plan, node_index, &domain);
	}
}

static int
count_llc_domains(const ns_topology *topo, int node_index)
{
	const ns_node *node = &topo->nodes[node_index];
	ns_cpuset	leaders;
	int			cpu;
	int			none = 0;

	ns_cpuset_zero(&leaders);
	NS_CPUSET_FOREACH(cpu, &node->cpus)
	{
		if (topo->llc_leader[cpu] >= 0)
			ns_cpuset_set(&leaders, topo->llc_leader[cpu]);
		else
			none = 1;
	}
	return ns_cpuset_count(&leaders) + none;
}

ns_plan *
ns_plan_build(const ns_topology *topo, int groups_per_node,
			  const ns_cpuset *only_nodes, char *err, size_t errlen)
{
	int			nn = topo->nnodes;
	ns_plan    *plan;
	int			total_groups = 0;
	bool	   *selected;
	steal_key  *keys;
	int			nselected = 0;

	if (groups_per_node < 0 || groups_per_node > NS_MAX_GROUPS_PER_NODE)
	{
		snprintf(err, errlen, "groups per node must be from 0 (automatic) to %d, not %d",
				 NS_MAX_GROUPS_PER_NODE, groups_per_node);
		return NULL;
	}
	if (only_nodes)
	{
		int			id;

		NS_CPUSET_FOREACH(id, only_nodes)
		{
			int			index = ns_topology_node_index(topo, id);

			if (index < 0 || !topo->nodes[index].has_cpus)
			{
				snprintf(err, errlen, "node %d %s", id,
						 index < 0 ? "does not exist or is not usable here" : "has no usable CPU");
				return NULL;
			}
		}
	}

	plan = calloc(1, sizeof(ns_plan));
	selected = calloc(nn, sizeof(bool));
	keys = malloc(nn * sizeof(steal_key));
	if (plan == NULL || selected == NULL || keys == NULL)
		goto oom;
	plan->topo = topo;
	plan->node_first_group = calloc(nn, sizeof(int));
	plan->node_ngroups = calloc(nn, sizeof(int));
	plan->node_ncpus = calloc(nn, sizeof(int));
	plan->node_nsteal = calloc(nn, sizeof(int));
	plan->steal = calloc((size_t) nn * nn, sizeof(int));
	plan->hops = calloc((size_t) nn * nn, 1);
	if (!plan->node_first_group || !plan->node_ngroups || !plan->node_ncpus ||
		!plan->node_nsteal || !plan->steal || !plan->hops)
		goto oom;

	for (int n = 0; n < nn; n++)
	{
		const ns_node *node = &topo->nodes[n];

		if (!node->has_cpus || (only_nodes && !ns_cpuset_test(only_nodes, node->id)))
			continue;
		selected[n] = true;
		nselected++;
		if (groups_per_node > node->ncpus)
		{
			snprintf(err, errlen, "%d groups per node is more than the %d usable CPU%s of node %d",
					 groups_per_node, node->ncpus, node->ncpus == 1 ? "" : "s", node->id);
			goto fail;
		}
		if (groups_per_node > 0)
			plan->node_ngroups[n] = groups_per_node;
		else
			plan->node_ngroups[n] = topo->has_llc ? count_llc_domains(topo, n) : 1;
		plan->node_first_group[n] = total_groups;
		plan->node_ncpus[n] = node->ncpus;
		total_groups += plan->node_ngroups[n];
	}
	if (nselected == 0)
	{
		snprintf(err, errlen, "no node with usable CPUs is selected");
		goto fail;
	}

	plan->groups = malloc(total_groups * sizeof(ns_group));
	if (plan->groups == NULL)
		goto oom;
	for (int n = 0; n < nn; n++)
	{
		if (!selected[n])
			continue;
		if (groups_per_node > 0)
		{
			if (!split_node(plan, n, groups_per_node))
				goto oom;
		}
		else if (topo->has_llc)
			split_node_by_llc(plan, n);
		else
			add_group(plan, n, &topo->nodes[n].cpus);
	}

	/*
	 * Steal order.  Ties are rotated by the asking node's position: on a
	 * 2-socket NPS4 machine node 0 asks the far nodes as 4,5,6,7, node 1 as
	 * 5,6,7,4, node 2 as 6,7,4,5, so no far node is everybody's first.
	 */
	for (int a = 0, position = 0; a < nn; a++)
	{
		int			nkeys = 0;
		int			hops = 0;
		int			last_distance = -1;

		if (!selected[a])
			continue;
		for (int b = 0; b < nn; b++)
		{
			if (b == a || !selected[b])
				continue;
			keys[nkeys].node = b;
			keys[nkeys].distance = ns_distance(topo, a, b);
			nkeys++;
		}
		qsort(keys, nkeys, sizeof(steal_key), compare_steal_key);
		rotate_ties(keys, nkeys, position++);
		plan->node_nsteal[a] = nkeys;
		for (int k = 0; k < nkeys; k++)
		{
			plan->steal[a * nn + k] = keys[k].node;
			if (keys[k].distance != last_distance)
				hops++;
			last_distance = keys[k].distance;
			plan->hops[a * nn + keys[k].node] = (uint8_t) (hops > 255 ? 255 : hops);
		}
	}
	free(selected);
	free(keys);
	return plan;

oom:
	snprintf(err, errlen, "out of memory building the CPU groups");
fail:
	free(selected);
	free(keys);
	ns_plan_free(plan);
	return NULL;
}

bool
ns_loads_alloc(const ns_plan *plan, ns_loads *loads)
{
	loads->group = calloc(plan->ngroups, sizeof(uint32_t));
	loads->node = calloc(plan->topo->nnodes, sizeof(uint64_t));
	loads->node_room = calloc(plan->topo->nnodes, sizeof(int));
	if (!loads->group || !loads->node || !loads->node_room)
	{
		ns_loads_free(loads);
		return false;
	}
	ns_loads_reset(plan, loads);
	return true;
}

void
ns_loads_free(ns_loads *loads)
{
	free(loads->group);
	free(loads->node);
	free(loads->node_room);
	loads->group = NULL;
	loads->node = NULL;
	loads->node_room = NULL;
}

void
ns_loads_reset(const ns_plan *plan, ns_loads *loads)
{
	memset(loads->group, 0, plan->ngroups * sizeof(uint32_t));
	memset(loads->node, 0, plan->topo->nnodes * sizeof(uint64_t));
	for (int n = 0; n < plan->topo->nnodes; n++)
		loads->node_room[n] = plan->node_ngroups[n];
}

void
ns_loads_add(const ns_plan *plan, ns_loads *loads, int group, int64_t delta)
{
	int			node = plan->groups[group].node;
	bool		had_room = ns_group_has_room(plan, loads, group);
	int64_t		load = (int64_t) loads->group[group] + delta;

	/* a caller that removes more than it added must not wrap around */
	if (load < 0)
		load = 0;
	if (load > UINT32_MAX)
		load = UINT32_MAX;
	loads->node[node] += load - loads->group[group];
	loads->group[group] = (uint32_t) load;
	if (had_room != ns_group_has_room(plan, loads, group))
		loads->node_room[node] += had_room ? -1 : 1;
}

/* Is load a / cpus a below load b / cpus b? */
static inline bool
less_loaded(uint64_t load_a, int cpus_a, uint64_t load_b, int cpus_b)
{
	return load_a * cpus_b < load_b * cpus_a;
}

/* Is group g in the set (NULL: every group)? */
static inline bool
in_set(const ns_cpuset *set, int g)
{
	return set == NULL || ns_cpuset_test(set, g);
}

/*
 * The least-loaded group of a node among "only", and among groups with room
 * if asked.
 */
static int
least_loaded_group(const ns_plan *plan, const ns_loads *loads, int node,
				   bool need_room, int except, const ns_cpuset *only)
{
	int			first = plan->node_first_group[node];
	int			end = first + plan->node_ngroups[node];
	int			best = -1;

	if (need_room && loads->node_room[node] == 0)
		return -1;
	for (int g = first; g < end; g++)
	{
		if (g == except || !in_set(only, g) ||
			(need_room && !ns_group_has_room(plan, loads, g)))
			continue;
		if (best < 0 || less_loaded(loads->group[g], plan->groups[g].ncpus,
									loads->group[best], plan->groups[best].ncpus))
			best = g;
	}
	return best;
}

int
ns_least_loaded_group(const ns_plan *plan, const ns_loads *loads, int node,
					  const ns_cpuset *only)
{
	if (node < 0 || node >= plan->topo->nnodes)
		return -1;
	return least_loaded_group(plan, loads, node, false, -1, only);
}

int
ns_group_of_cpu(const ns_plan *plan, int cpu)
{
	for (int g = 0; g < plan->ngroups; g++)
		if (ns_cpuset_test(&plan->groups[g].cpus, cpu))
			return g;
	return -1;
}

/* Does the node have a group in "only"? */
static bool
node_has_group_in(const ns_plan *plan, int node, const ns_cpuset *only)
{
	int			first = plan->node_first_group[node];

	for (int g = first; g < first + plan->node_ngroups[node]; g++)
		if (in_set(only, g))
			return true;
	return false;
}

/* The least-loaded node with a group in "only". */
static int
least_loaded_node(const ns_plan *plan, const ns_loads *loads, const ns_cpuset *only)
{
	int			best = -1;

	for (int n = 0; n < plan->topo->nnodes; n++)
	{
		if (plan->node_ngroups[n] == 0 || (only && !node_has_group_in(plan, n, only)))
			continue;
		if (best < 0 || less_loaded(loads->node[n], plan->node_ncpus[n],
									loads->node[best], plan->node_ncpus[best]))
			best = n;
	}
	return best;
}

static inline bool
within_reach(const ns_plan *plan, const ns_settings *settings, int from, int to)
{
	return settings->max_steal_distance == 0 ||
		ns_distance(plan->topo, from, to) <= settings->max_steal_distance;
}

static void
finish(const ns_plan *plan, int home, int group, ns_placement *result)
{
	int			node = plan->groups[group].node;

	result->group = group;
	result->node = node;
	result->home_node = home;
	result->hops = plan->hops[home * plan->topo->nnodes + node];
}

/*
 * Everything in reach is full: the group of "only" with the least load per
 * CPU, counting the newcomer, weighted by distance from home (work
 * conserving); within the maximum steal distance if "limited".
 */
static int
least_loaded_weighted(const ns_plan *plan, const ns_loads *loads,
					  const ns_settings *settings, int home, const ns_cpuset *only,
					  bool limited)
{
	int			nn = plan->topo->nnodes;
	int			best = -1;
	uint64_t	best_load = 0;
	int			best_cpus = 1;

	for (int k = -1; k < plan->node_nsteal[home]; k++)
	{
		int			node = k < 0 ? home : plan->steal[home * nn + k];
		int			first = plan->node_first_group[node];
		uint64_t	distance = ns_distance(plan->topo, home, node);

		if (limited && !within_reach(plan, settings, home, node))
			break;				/* steal order is sorted by distance */
		for (int g = first; g < first + plan->node_ngroups[node]; g++)
		{
			uint64_t	weighted = ((uint64_t) loads->group[g] + NS_DEFAULT_WEIGHT) * distance;

			if (!in_set(only, g))
				continue;
			if (best < 0 || less_loaded(weighted, plan->groups[g].ncpus, best_load, best_cpus))
			{
				best = g;
				best_load = weighted;
				best_cpus = plan->groups[g].ncpus;
			}
		}
	}
	return best;
}

/*
 * A group with room among "only": the home node's least loaded, else the
 * nearest node's in steal order (or, spreading, from the start-th node of
 * [home, steal order] on); -1 if none.
 */
static int
group_with_room(const ns_plan *plan, const ns_loads *loads, const ns_settings *settings,
				int home, int start, const ns_cpuset *only)
{
	int			nn = plan->topo->nnodes;
	int			reach = 1;

	while (reach <= plan->node_nsteal[home] &&
		   within_reach(plan, settings, home, plan->steal[home * nn + reach - 1]))
		reach++;
	for (int k = 0; k < reach; k++)
	{
		int			pos = (start + k) % reach;
		int			node = pos == 0 ? home : plan->steal[home * nn + pos - 1];
		int			group = least_loaded_group(plan, loads, node, true, -1, only);

		if (group >= 0)
			return group;
	}
	return -1;
}

void
ns_place(const ns_plan *plan, const ns_loads *loads, const ns_settings *settings,
		 const ns_request *request, ns_placement *result)
{
	int			nn = plan->topo->nnodes;
	const ns_cpuset *home_groups = request->home_groups;
	const ns_cpuset *reach_groups = request->reach_groups;
	int			previous = request->previous_group;
	int			leader = request->leader_group;
	int			home;
	int			start = 0;
	int			group;

	if (previous >= plan->ngroups || (previous >= 0 && !in_set(home_groups, previous)))
		previous = -1;			/* the groups changed since, or the class did */
	if (leader >= plan->ngroups)
		leader = -1;

	if (request->parallel_worker && leader >= 0)
		home = plan->groups[leader].node;
	else if (request->home_node >= 0 && request->home_node < nn &&
			 plan->node_ngroups[request->home_node] > 0)
		home = request->home_node;
	else if (previous >= 0)
		home = plan->groups[previous].node;
	else
		home = least_loaded_node(plan, loads, home_groups);
	if (home < 0)
	{
		/* a class with no group in this plan: no class */
		home_groups = reach_groups = NULL;
		home = least_loaded_node(plan, loads, NULL);
	}

	if (settings->prefer_previous && previous >= 0 &&
		ns_group_has_room(plan, loads, previous))
	{
		finish(plan, home, previous, result);
		return;
	}

	if (request->parallel_worker && settings->parallel == NS_PARALLEL_SPREAD)
	{
		/*
		 * Spread: worker i starts at the (i+1)-th node of [home, steal
		 * order...] in reach, so that the leader's node and the nearest
		 * nodes share the scan's memory bandwidth.
		 */
		start = request->worker_number + 1;
	}
	else if (request->parallel_worker && leader >= 0 && in_set(home_groups, leader) &&
			 ns_group_has_room(plan, loads, leader))
	{
		/* compact: the leader's group first, its caches are warm for us */
		finish(plan, home, leader, result);
		return;
	}

	/* the class's groups; then, when they are full, the groups it may spill to */
	group = group_with_room(plan, loads, settings, home, start, home_groups);
	if (group < 0 && reach_groups != home_groups)
		group = group_with_room(plan, loads, settings, home, start, reach_groups);
	/* all full: the least loaded of its own, in steal reach if any is */
	if (group < 0)
		group = least_loaded_weighted(plan, loads, settings, home, home_groups, true);
	if (group < 0)
		group = least_loaded_weighted(plan, loads, settings, home, home_groups, false);
	/* a class naming no group of this plan: as if it had none */
	if (group < 0)
		group = least_loaded_weighted(plan, loads, settings, home, NULL, false);
	finish(plan, home, group, result);
}

/* Rebalance --------------------------------------------------------------- */

typedef struct rebalance_state
{
	const ns_plan *plan;
	uint64_t   *load;			/* measured, per group */
	int		   *head;			/* first proc of each group */
	int		   *next;			/* next proc in the same group */
	int		   *order;			/* groups, busiest first */
} rebalance_state;

static int
compare_busiest(const void *a, const void *b, void *arg)
{
	const rebalance_state *sort_state = arg;
	const ns_plan *plan = sort_state->plan;
	int			x = *(const int *) a,
				y = *(const int *) b;

	if (less_loaded(sort_state->load[y], plan->groups[y].ncpus,
					sort_state->load[x], plan->groups[x].ncpus))
		return -1;
	if (less_loaded(sort_state->load[x], plan->groups[x].ncpus,
					sort_state->load[y], plan->groups[y].ncpus))
		return 1;
	return x - y;
}

static double
per_cpu(const rebalance_state *st, int group)
{
	return (double) st->load[group] / NS_CPU_LOAD / st->plan->groups[group].ncpus;
}

/*
 * The heaviest process of src that may go to dst and whose move does not
 * turn the imbalance around (which would only invite the move back).
 */
static int
pick_process(const rebalance_state *st, const ns_settings *settings,
			 const ns_proc *procs, uint32_t pass, int src, int dst)
{
	const ns_plan *plan = st->plan;
	int			dst_node = plan->groups[dst].node;
	bool		cross_node = settings->cross_node_only_when_waiting &&
		dst_node != plan->groups[src].node;
	double		src_cpus = plan->groups[src].ncpus;
	double		dst_cpus = plan->groups[dst].ncpus;
	int			best = -1;

	for (int p = st->head[src]; p >= 0; p = st->next[p])
	{
		double		w = (double) procs[p].weight / NS_CPU_LOAD;

		if (procs[p].weight == 0)
			continue;
		if (procs[p].moved_pass != 0 &&
			pass - procs[p].moved_pass < (uint32_t) settings->cooldown_passes)
			continue;
		if ((procs[p].keep_node >= 0 && procs[p].keep_node != dst_node) ||
			!in_set(procs[p].allowed, dst))
			continue;
		if (per_cpu(st, src) - w / src_cpus < per_cpu(st, dst) + w / dst_cpus)
			continue;
		/* to another node: only from a group that waits, into a free CPU */
		if (cross_node && ((per_cpu(st, src) - 1.0) * 100 <= settings->imbalance_threshold ||
						   per_cpu(st, dst) + w / dst_cpus > 1.0))
			continue;
		if (best < 0 || procs[p].weight > procs[best].weight)
			best = p;
	}
	return best;
}

/*
 * Finds one move from src, nearest nodes first and, on a node, to its least
 * loaded group that takes one of src's processes (a workload class may keep
 * them out of the others); returns the proc or -1.
 */
static int
find_move(const rebalance_state *st, const ns_settings *settings,
		  const ns_proc *procs, uint32_t pass, int src, int *dst_out)
{
	const ns_plan *plan = st->plan;
	int			nn = plan->topo->nnodes;
	int			home = plan->groups[src].node;

	/* a group that does not wait keeps its processes on its node */
	bool		may_leave = !settings->cross_node_only_when_waiting ||
		(per_cpu(st, src) - 1.0) * 100 > settings->imbalance_threshold;

	for (int k = -1; k < (may_leave ? plan->node_nsteal[home] : 0); k++)
	{
		int			node = k < 0 ? home : plan->steal[home * nn + k];
		int			first = plan->node_first_group[node];
		int			best = -1;
		int			best_dst = -1;

		if (!within_reach(plan, settings, home, node))
			break;
		for (int dst = first; dst < first + plan->node_ngroups[node]; dst++)
		{
			int			p;

			if (dst == src ||
				(per_cpu(st, src) - per_cpu(st, dst)) * 100 <= settings->imbalance_threshold ||
				/* another node's group without a free CPU takes nobody */
				(k >= 0 && settings->cross_node_only_when_waiting && per_cpu(st, dst) >= 1.0) ||
				(best_dst >= 0 && !less_loaded(st->load[dst], plan->groups[dst].ncpus,
											   st->load[best_dst], plan->groups[best_dst].ncpus)))
				continue;
			p = pick_process(st, settings, procs, pass, src, dst);
			if (p >= 0)
			{
				best = p;
				best_dst = dst;
			}
		}
		if (best >= 0)
		{
			*dst_out = best_dst;
			return best;
		}
	}
	return -1;
}

int
ns_rebalance(const ns_plan *plan, const ns_settings *settings,
			 ns_proc *procs, int nprocs, uint32_t pass,
			 ns_move *moves, int max_moves_out)
{
	rebalance_state st;
	int			limit = settings->max_moves < max_moves_out ? settings->max_moves : max_moves_out;
	int			nmoves = 0;

	st.plan = plan;
	st.load = calloc(plan->ngroups, sizeof(uint64_t));
	st.head = malloc(plan->ngroups * sizeof(int));
	st.next = malloc((nprocs > 0 ? nprocs : 1) * sizeof(int));
	st.order = malloc(plan->ngroups * sizeof(int));
	if (!st.load || !st.head || !st.next || !st.order)
		goto done;

	for (int g = 0; g < plan->ngroups; g++)
	{
		st.head[g] = -1;
		st.order[g] = g;
	}
	for (int p = nprocs - 1; p >= 0; p--)
	{
		int			g = procs[p].group;

		if (g < 0 || g >= plan->ngroups)
			continue;
		st.load[g] += procs[p].weight;
		st.next[p] = st.head[g];
		st.head[g] = p;
	}

	while (nmoves < limit)
	{
		int			proc = -1;
		int			src = -1;
		int			dst = -1;

		qsort_r(st.order, plan->ngroups, sizeof(int), compare_busiest, &st);
		for (int i = 0; i < plan->ngroups && proc < 0; i++)
		{
			src = st.order[i];
			/* no group can be idle enough for a group this light */
			if (per_cpu(&st, src) * 100 <= settings->imbalance_threshold)
				break;
			proc = find_move(&st, settings, procs, pass, src, &dst);
		}
		if (proc < 0)
			break;

		/* unlink from src, link into dst */
		for (int *link = &st.head[src]; *link >= 0; link = &st.next[*link])
		{
			if (*link == proc)
			{
				*link = st.next[proc];
				break;
			}
		}
		st.next[proc] = st.head[dst];
		st.head[dst] = proc;
		st.load[src] -= procs[proc].weight;
		st.load[dst] += procs[proc].weight;
		procs[proc].group = dst;
		procs[proc].moved_pass = pass;
		moves[nmoves].proc = proc;
		moves[nmoves].from_group = src;
		moves[nmoves].to_group = dst;
		moves[nmoves].hops = plan->hops[plan->groups[src].node * plan->topo->nnodes +
										plan->groups[dst].node];
		nmoves++;
	}

done:
	free(st.load);
	free(st.head);
	free(st.next);
	free(st.order);
	return nmoves;
}
