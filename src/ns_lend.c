/*
 * ns_lend.c - which group lends its idle CPUs to which (see ns_lend.h)
 */
#include <stdlib.h>
#include <string.h>

#include "ns_lend.h"

bool
ns_lending_alloc(int ngroups, ns_lending *lending)
{
	lending->ngroups = ngroups;
	lending->lender = malloc(sizeof(int) * (ngroups > 0 ? ngroups : 1));
	lending->spare_us = malloc(sizeof(uint64_t) * (ngroups > 0 ? ngroups : 1));
	lending->window_us = malloc(sizeof(uint64_t) * (ngroups > 0 ? ngroups : 1));
	if (!lending->lender || !lending->spare_us || !lending->window_us)
	{
		ns_lending_free(lending);
		return false;
	}
	ns_lending_reset(lending);
	return true;
}

void
ns_lending_free(ns_lending *lending)
{
	free(lending->lender);
	free(lending->spare_us);
	free(lending->window_us);
	memset(lending, 0, sizeof(*lending));
}

void
ns_lending_reset(ns_lending *lending)
{
	for (int g = 0; g < lending->ngroups; g++)
	{
		lending->lender[g] = -1;
		lending->spare_us[g] = 0;
		lending->window_us[g] = 0;
	}
}

/*
 * Its processes waited for a tenth of the tick, and its CPUs were idle for
 * less than half of it (inside a group the kernel runs what waits on the
 * first CPU that idles: the two came at different moments): its work waits
 * for want of a CPU.
 */
static bool
group_waits(const uint64_t *idle_us, const uint64_t *waited_us, int g, uint64_t tick_us)
{
	return waited_us[g] * 10 >= tick_us && idle_us[g] * 2 < tick_us;
}

/* A CPU of the group idle for half the tick at least: it can lend. */
static bool
group_idle(const uint64_t *idle_us, int g, uint64_t tick_us)
{
	return idle_us[g] * 2 >= tick_us;
}

/*
 * The group with the most idle CPU of the nearest node that has one: the
 * borrower's own node first, then the nodes in its steal order, never beyond
 * max_steal_distance.
 */
static int
nearest_idle_group(const ns_plan *plan, const ns_settings *settings, int borrower,
				   const uint64_t *idle_us, uint64_t tick_us)
{
	int			nn = plan->topo->nnodes;
	int			home = plan->groups[borrower].node;

	for (int k = -1; k < plan->node_nsteal[home]; k++)
	{
		int			node = k < 0 ? home : plan->steal[home * nn + k];
		int			best = -1;

		if (!ns_within_reach(plan, settings, home, node))
			break;				/* the steal order is nearest first */
		for (int i = 0; i < plan->node_ngroups[node]; i++)
		{
			int			g = plan->node_first_group[node] + i;

			if (g != borrower && group_idle(idle_us, g, tick_us) &&
				(best < 0 || idle_us[g] > idle_us[best]))
				best = g;
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

int
ns_lend_tick(const ns_plan *plan, const ns_settings *settings,
			 const uint64_t *idle_us, const uint64_t *waited_us, uint64_t tick_us,
			 ns_lending *lending, int *changed)
{
	int			n = 0;

	/* a borrower whose work would have fitted at home gives back */
	for (int g = 0; g < plan->ngroups && g < lending->ngroups; g++)
	{
		int			lender = lending->lender[g];

		if (lender < 0)
			continue;
		lending->spare_us[g] += idle_us[g] + idle_us[lender];
		lending->window_us[g] += tick_us;
		if (lending->window_us[g] < NS_LEND_RETURN_WINDOW_US)
			continue;
		if (lending->spare_us[g] * 10 >= lending->window_us[g] * plan->groups[lender].ncpus * 9)
		{
			lending->lender[g] = -1;
			changed[n++] = g;
		}
		lending->spare_us[g] = lending->window_us[g] = 0;
	}
	if (waited_us == NULL)
		return n;
	/*
	 * A group whose CPUs were all busy while its work waited borrows; one
	 * that still waits with a lender that had no CPU idle either turns to
	 * another.
	 */
	for (int g = 0; g < plan->ngroups && g < lending->ngroups; g++)
	{
		int			lender = lending->lender[g];

		if (!group_waits(idle_us, waited_us, g, tick_us) ||
			(lender >= 0 && group_idle(idle_us, lender, tick_us)))
			continue;
		lender = nearest_idle_group(plan, settings, g, idle_us, tick_us);
		if (lender < 0 || lender == lending->lender[g])
			continue;
		lending->lender[g] = lender;
		lending->spare_us[g] = lending->window_us[g] = 0;
		changed[n++] = g;
	}
	return n;
}
