/*
 * ns_rebalance.c - one rebalancing pass: moves from the busiest groups to
 * the least loaded within reach, nearest nodes first, across nodes only
 * where a group waits (numasched.cross_node_moves)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* CPU_ALLOC, qsort_r */
#endif
#include "core/ns_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

	if (ns_less_loaded(sort_state->load[y], plan->groups[y].ncpus,
					sort_state->load[x], plan->groups[x].ncpus))
		return -1;
	if (ns_less_loaded(sort_state->load[x], plan->groups[x].ncpus,
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
			!ns_in_set(procs[p].allowed, dst))
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

		if (!ns_within_reach(plan, settings, home, node))
			break;
		for (int dst = first; dst < first + plan->node_ngroups[node]; dst++)
		{
			int			p;

			if (dst == src ||
				(per_cpu(st, src) - per_cpu(st, dst)) * 100 <= settings->imbalance_threshold ||
				/* another node's group without a free CPU takes nobody */
				(k >= 0 && settings->cross_node_only_when_waiting && per_cpu(st, dst) >= 1.0) ||
				(best_dst >= 0 && !ns_less_loaded(st->load[dst], plan->groups[dst].ncpus,
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
