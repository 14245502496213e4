/*
 * ns_place.c - loads per group and node, and placement of a new process
 *
 * Placement follows DESIGN.md: the least-loaded group on the home node, then
 * the nearest node with room in steal order up to the maximum steal
 * distance, and when everything is full the least-loaded group weighted by
 * distance.  Relative loads are compared by cross-multiplying, so the hot
 * path has no division.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* CPU_ALLOC, qsort_r */
#endif
#include "core/ns_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		if (g == except || !ns_in_set(only, g) ||
			(need_room && !ns_group_has_room(plan, loads, g)))
			continue;
		if (best < 0 || ns_less_loaded(loads->group[g], plan->groups[g].ncpus,
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
		if (ns_in_set(only, g))
			return true;
	return false;
}

/*
 * The least-loaded node with a group in "only"; of equally loaded ones,
 * "running" (a node index, -1: none), else the first.
 */
static int
least_loaded_node(const ns_plan *plan, const ns_loads *loads, const ns_cpuset *only, int running)
{
	int			best = -1;

	for (int n = 0; n < plan->topo->nnodes; n++)
	{
		if (plan->node_ngroups[n] == 0 || (only && !node_has_group_in(plan, n, only)))
			continue;
		if (best < 0 || ns_less_loaded(loads->node[n], plan->node_ncpus[n],
									loads->node[best], plan->node_ncpus[best]) ||
			(n == running && !ns_less_loaded(loads->node[best], plan->node_ncpus[best],
											 loads->node[n], plan->node_ncpus[n])))
			best = n;
	}
	return best;
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

		if (limited && !ns_within_reach(plan, settings, home, node))
			break;				/* steal order is sorted by distance */
		for (int g = first; g < first + plan->node_ngroups[node]; g++)
		{
			uint64_t	weighted = ((uint64_t) loads->group[g] + NS_DEFAULT_WEIGHT) * distance;

			if (!ns_in_set(only, g))
				continue;
			if (best < 0 || ns_less_loaded(weighted, plan->groups[g].ncpus, best_load, best_cpus))
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
		   ns_within_reach(plan, settings, home, plan->steal[home * nn + reach - 1]))
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
	int			running = -1;
	int			home;
	int			start = 0;
	int			group;

	if (previous >= plan->ngroups || (previous >= 0 && !ns_in_set(home_groups, previous)))
		previous = -1;			/* the groups changed since, or the class did */
	if (leader >= plan->ngroups)
		leader = -1;
	if (request->running_cpu >= 0 && (group = ns_group_of_cpu(plan, request->running_cpu)) >= 0)
		running = plan->groups[group].node;

	if (request->parallel_worker && leader >= 0)
		home = plan->groups[leader].node;
	else if (request->home_node >= 0 && request->home_node < nn &&
			 plan->node_ngroups[request->home_node] > 0)
		home = request->home_node;
	else if (previous >= 0)
		home = plan->groups[previous].node;
	else
		home = least_loaded_node(plan, loads, home_groups, running);
	if (home < 0)
	{
		/* a class with no group in this plan: no class */
		home_groups = reach_groups = NULL;
		home = least_loaded_node(plan, loads, NULL, running);
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
	else if (request->parallel_worker && leader >= 0 && ns_in_set(home_groups, leader) &&
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

void
ns_home_cpus(const ns_plan *plan, int g, const ns_cpuset *home, ns_cpuset *cpus)
{
	int			node = plan->groups[g].node;

	*cpus = plan->groups[g].cpus;
	if (!plan->groups_share_node)
		return;
	for (int i = 0; i < plan->node_ngroups[node]; i++)
	{
		int			other = plan->node_first_group[node] + i;

		if (ns_in_set(home, other))
			ns_cpuset_or(cpus, cpus, &plan->groups[other].cpus);
	}
}

void
ns_reach_cpus(const ns_plan *plan, const ns_settings *settings, int home,
			  const ns_cpuset *reach, ns_cpuset *cpus)
{
	ns_cpuset_zero(cpus);
	for (int g = 0; g < plan->ngroups; g++)
		if (ns_in_set(reach, g) && ns_within_reach(plan, settings, home, plan->groups[g].node))
			ns_cpuset_or(cpus, cpus, &plan->groups[g].cpus);
}

void
ns_bound_cpus(const ns_plan *plan, const ns_settings *settings, int g,
			  const ns_cpuset *home, const ns_cpuset *reach, bool wide, ns_cpuset *cpus)
{
	int			node = plan->groups[g].node;

	if (wide)
	{
		ns_reach_cpus(plan, settings, node, reach, cpus);
		return;
	}
	ns_home_cpus(plan, g, home, cpus);
	if (!plan->nodes_shared || !plan->groups_share_node)
		return;
	/* on its own node what its class has there, and what it may reach on the others */
	for (int h = 0; h < plan->ngroups; h++)
		if (plan->groups[h].node != node && ns_in_set(reach, h) &&
			ns_within_reach(plan, settings, node, plan->groups[h].node))
			ns_cpuset_or(cpus, cpus, &plan->groups[h].cpus);
}
