/*
 * ns_plan.c - the plan: a topology's CPU groups (per last-level cache, or a
 * number per node) and every node's steal order (nearest first, ties
 * rotated so that equally near nodes share the spill)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* CPU_ALLOC, qsort_r */
#endif
#include "core/ns_policy.h"

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
	int			ids = 1;
	int		   *unit_of_cpu;
	int		   *unit_of_leader;
	int			nunits = 0;
	int			cpu;

	/*
	 * Indexed by CPU number up to the node's last (a core's leader is its
	 * lowest CPU): every session that sets a class builds a plan, and arrays
	 * for NS_MAX_CPUS would be 64 kB of its memory written for nothing.
	 */
	NS_CPUSET_FOREACH(cpu, &node->cpus)
		ids = cpu + 1;
	unit_of_cpu = malloc(ids * sizeof(int));
	unit_of_leader = malloc(ids * sizeof(int));
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
	for (int i = 0; i < ids; i++)
		unit_of_leader[i] = -1;
	NS_CPUSET_FOREACH(cpu, &node->cpus)
	{
		int			lead = topo->core_leader[cpu];

		if (lead < 0 || lead >= ids)
			lead = cpu;			/* a sibling list without the CPU itself: a core of its own */
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

/* Whether every node of "only_nodes" is one of ours with a usable CPU. */
static bool
nodes_usable(const ns_topology *topo, const ns_cpuset *only_nodes, char *err, size_t errlen)
{
	int			id;

	NS_CPUSET_FOREACH(id, only_nodes)
	{
		int			index = ns_topology_node_index(topo, id);

		if (index < 0 || !topo->nodes[index].has_cpus)
		{
			snprintf(err, errlen, "node %d %s", id,
					 index < 0 ? "does not exist or is not usable here" : "has no usable CPU");
			return false;
		}
	}
	return true;
}

/*
 * Selects the nodes with usable CPUs (those of "only_nodes" if given) and
 * counts each one's groups; the number of groups, or -1 with a message.
 */
static int
count_groups(ns_plan *plan, int groups_per_node, const ns_cpuset *only_nodes, bool *selected,
			 char *err, size_t errlen)
{
	const ns_topology *topo = plan->topo;
	int			total_groups = 0;
	int			nselected = 0;

	for (int n = 0; n < topo->nnodes; n++)
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
			return -1;
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
		return -1;
	}
	return total_groups;
}

/*
 * Steal order.  Ties are rotated by the asking node's position: on a
 * 2-socket NPS4 machine node 0 asks the far nodes as 4,5,6,7, node 1 as
 * 5,6,7,4, node 2 as 6,7,4,5, so no far node is everybody's first.
 */
static void
order_steals(ns_plan *plan, const bool *selected, steal_key *keys)
{
	const ns_topology *topo = plan->topo;
	int			nn = topo->nnodes;

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
}

ns_plan *
ns_plan_build(const ns_topology *topo, int groups_per_node,
			  const ns_cpuset *only_nodes, char *err, size_t errlen)
{
	int			nn = topo->nnodes;
	ns_plan    *plan;
	int			total_groups;
	bool	   *selected;
	steal_key  *keys;

	if (groups_per_node < 0 || groups_per_node > NS_MAX_GROUPS_PER_NODE)
	{
		snprintf(err, errlen, "groups per node must be from 0 (automatic) to %d, not %d",
				 NS_MAX_GROUPS_PER_NODE, groups_per_node);
		return NULL;
	}
	if (only_nodes && !nodes_usable(topo, only_nodes, err, errlen))
		return NULL;

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

	total_groups = count_groups(plan, groups_per_node, only_nodes, selected, err, errlen);
	if (total_groups < 0)
		goto fail;
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
	order_steals(plan, selected, keys);
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
