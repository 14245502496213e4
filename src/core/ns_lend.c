/*
 * ns_lend.c - which group lends its idle CPUs to which (see ns_lend.h)
 */
#include <stdlib.h>
#include <string.h>

#include "core/ns_lend.h"

bool
ns_lending_alloc(int ngroups, ns_lending *lending)
{
	lending->ngroups = ngroups;
	lending->lender = malloc(sizeof(int) * (ngroups > 0 ? ngroups : 1));
	lending->spare_us = malloc(sizeof(uint64_t) * (ngroups > 0 ? ngroups : 1));
	lending->window_us = malloc(sizeof(uint64_t) * (ngroups > 0 ? ngroups : 1));
	lending->noted = calloc(ngroups > 0 ? ngroups : 1, sizeof(bool));
	if (!lending->lender || !lending->spare_us || !lending->window_us || !lending->noted)
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
	free(lending->noted);
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

/* Its processes waited for a CPU for a tenth of the tick at least. */
static bool
waited_enough(const ns_lend_sample *s, int g, uint64_t tick_us)
{
	return s->waited_us[g] * 10 >= tick_us;
}

/*
 * The idle time of the CPUs group g's processes run on without a lender:
 * its own, or where the groups of a node share its CPUs, the node's.
 */
static uint64_t
own_idle_us(const ns_plan *plan, const ns_lend_sample *s, int g)
{
	int			node = plan->groups[g].node;
	uint64_t	idle = 0;

	if (!plan->groups_share_node)
		return s->idle_us[g];
	for (int i = 0; i < plan->node_ngroups[node]; i++)
		idle += s->idle_us[plan->node_first_group[node] + i];
	return idle;
}

/*
 * Its processes waited, and its CPUs were idle for less than half of the
 * tick (inside a group the kernel runs what waits on the first CPU that
 * idles: the two came at different moments): its work waits for want of a
 * CPU.
 */
static bool
group_waits(const ns_plan *plan, const ns_lend_sample *s, int g, uint64_t tick_us)
{
	return waited_enough(s, g, tick_us) && own_idle_us(plan, s, g) * 2 < tick_us;
}

/* A CPU of the group idle for half the tick at least: it can lend. */
static bool
group_idle(const ns_lend_sample *s, int g, uint64_t tick_us)
{
	return s->idle_us[g] * 2 >= tick_us;
}


/*
 * The group with the most room (room() > 0) of the nearest node that has
 * one: home's own node first unless own_node is false, then the nodes in its
 * steal order, never beyond max_steal_distance.  -1: none.
 */
static int
nearest_with_room(const ns_plan *plan, const ns_settings *settings, int home, bool own_node,
				  int64_t (*room) (int g, const void *arg), const void *arg)
{
	int			nn = plan->topo->nnodes;

	for (int k = own_node ? -1 : 0; k < plan->node_nsteal[home]; k++)
	{
		int			node = k < 0 ? home : plan->steal[home * nn + k];
		int			best = -1;
		int64_t		best_room = 0;

		if (!ns_within_reach(plan, settings, home, node))
			break;				/* the steal order is nearest first */
		for (int i = 0; i < plan->node_ngroups[node]; i++)
		{
			int			g = plan->node_first_group[node] + i;
			int64_t		r = room(g, arg);

			if (r > best_room)
			{
				best = g;
				best_room = r;
			}
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

typedef struct idle_room_arg
{
	const ns_plan *plan;
	const ns_lending *lending;
	const ns_lend_sample *s;
	uint64_t	tick_us;
	int			borrower;
} idle_room_arg;

/* Idle for half the tick and borrowing nothing itself (on its own node it may). */
static int64_t
idle_room(int g, const void *arg)
{
	const idle_room_arg *a = arg;

	if (g == a->borrower || g >= a->lending->ngroups || !group_idle(a->s, g, a->tick_us) ||
		(a->lending->lender[g] >= 0 && a->plan->groups[g].node != a->plan->groups[a->borrower].node))
		return 0;
	return (int64_t) a->s->idle_us[g];
}

/*
 * The group with the most idle CPU of the nearest node that has one, and
 * that borrows nothing itself: the borrower's own node first (unless its
 * groups share the node's CPUs already), then the nodes in its steal
 * order, never beyond max_steal_distance.
 */
static int
nearest_idle_group(const ns_plan *plan, const ns_settings *settings, const ns_lending *lending,
				   int borrower, const ns_lend_sample *s, uint64_t tick_us)
{
	idle_room_arg arg = {plan, lending, s, tick_us, borrower};

	return nearest_with_room(plan, settings, plan->groups[borrower].node, !plan->groups_share_node,
							 idle_room, &arg);
}

/* Group g's lender changed in this tick: written to changed[] once. */
static void
note_change(ns_lending *lending, int g, int *changed, int *n)
{
	if (lending->noted[g])
		return;
	lending->noted[g] = true;
	changed[(*n)++] = g;
}

static void
give_back(ns_lending *lending, int g, int *changed, int *n)
{
	lending->lender[g] = -1;
	lending->spare_us[g] = lending->window_us[g] = 0;
	note_change(lending, g, changed, n);
}

/*
 * Whether group g, whose work waits, lends its CPUs to a group on another
 * node still: a borrower that has a CPU idle itself now gives them back
 * first, so that lending turns round between two nodes without both masks
 * open at once (with both open, the kernel may swap a process of each and
 * keep them away from their memory).  Between groups of one node lending
 * goes both ways: nothing is kept away from its memory.
 */
static bool
still_lends(const ns_plan *plan, ns_lending *lending, const ns_lend_sample *s, int ngroups, int g,
			uint64_t tick_us, int *changed, int *n)
{
	bool		lends = false;

	for (int b = 0; b < ngroups; b++)
	{
		if (lending->lender[b] != g || plan->groups[b].node == plan->groups[g].node)
			continue;
		if (own_idle_us(plan, s, b) * 2 >= tick_us)
			give_back(lending, b, changed, n);
		else
			lends = true;
	}
	return lends;
}

int
ns_lend_tick(const ns_plan *plan, const ns_settings *settings, const ns_lend_sample *s,
			 uint64_t tick_us, ns_lending *lending, int *changed)
{
	int			ngroups = plan->ngroups < lending->ngroups ? plan->ngroups : lending->ngroups;
	int			n = 0;

	for (int g = 0; g < ngroups; g++)
	{
		int			lender = lending->lender[g];

		if (lender < 0)
			continue;
		lending->spare_us[g] += own_idle_us(plan, s, g) + s->idle_us[lender];
		lending->window_us[g] += tick_us;
		if (lending->window_us[g] < NS_LEND_RETURN_WINDOW_US)
			continue;
		/* the two left a lender's worth of CPU idle: its own CPUs would have held its work */
		if (lending->spare_us[g] * 10 >= lending->window_us[g] * plan->groups[lender].ncpus * 9)
			give_back(lending, g, changed, &n);
		else
			lending->spare_us[g] = lending->window_us[g] = 0;
	}

	/*
	 * A group whose work waits borrows, unless it lends to a group that
	 * needs them; one that still waits with a lender that had no CPU idle
	 * either turns to another.
	 */
	for (int g = 0; g < ngroups; g++)
	{
		int			lender = lending->lender[g];

		if (!group_waits(plan, s, g, tick_us) || (lender >= 0 && group_idle(s, lender, tick_us)) ||
			still_lends(plan, lending, s, ngroups, g, tick_us, changed, &n))
			continue;
		lender = nearest_idle_group(plan, settings, lending, g, s, tick_us);
		if (lender < 0 || lender == lending->lender[g] || waited_enough(s, lender, tick_us))
			continue;
		lending->lender[g] = lender;
		lending->spare_us[g] = lending->window_us[g] = 0;
		note_change(lending, g, changed, &n);
	}
	for (int i = 0; i < n; i++)
		lending->noted[changed[i]] = false;
	return n;
}

void
ns_lend_unit(const ns_plan *plan, int g, int *first, int *ngroups, int *cpus)
{
	int			node = plan->groups[g].node;

	if (!plan->groups_share_node)
	{
		*first = g;
		*ngroups = 1;
		*cpus = plan->groups[g].ncpus;
		return;
	}
	*first = plan->node_first_group[node];
	*ngroups = plan->node_ngroups[node];
	*cpus = plan->node_ncpus[node];
}

/*
 * Group g's unit: its CPUs, and the statements that run on them, and with
 * "away" (NULL: none) those of its own lent CPUs elsewhere too.
 */
static void
unit_of(const ns_plan *plan, const uint32_t *running, const uint32_t *away, int g, int64_t *cpus,
		int64_t *busy)
{
	int			first,
				ngroups,
				ncpus;

	ns_lend_unit(plan, g, &first, &ngroups, &ncpus);
	*cpus = ncpus;
	*busy = 0;
	for (int i = first; i < first + ngroups; i++)
		*busy += running[i] + (away ? away[i] : 0);
}

typedef struct statement_room_arg
{
	const ns_plan *plan;
	const uint32_t *running;
	const uint32_t *away;
	const ns_cpuset *reach;
	int			home;
} statement_room_arg;

/*
 * How long a statement that starts in a unit of "cpus" CPUs running "busy"
 * would wait for one, in statements, times cpus: none while a CPU is free,
 * else a CPU's share of those ahead of it.
 */
static int64_t
wait_times_cpus(int64_t cpus, int64_t busy)
{
	return busy + 1 > cpus ? busy + 1 - cpus : 0;
}

/*
 * A group where the statement would wait at least one statement less than
 * at home: a shorter wait costs less than running away from its memory (a
 * node of many CPUs frees one soon, and the tick lends if it does not).
 * There, the group's own statements lent CPUs elsewhere count as its: they
 * go home when it idles, and a statement that took their CPU would run
 * swapped with them, both away from their memory.
 * The most room goes to the shortest wait, then to the group with the most
 * of its own CPUs free: a visitor is moved onto the group's CPUs.
 */
static int64_t
statement_room(int g, const void *arg)
{
	const statement_room_arg *a = arg;
	int64_t		cpus,
				busy,
				home_cpus,
				home_busy,
				less,
				own_free;

	if (g == a->home || !ns_in_set(a->reach, g))
		return 0;
	unit_of(a->plan, a->running, a->away, g, &cpus, &busy);
	unit_of(a->plan, a->running, NULL, a->home, &home_cpus, &home_busy);
	/* wait at home / home_cpus - wait there / cpus >= 1 */
	less = wait_times_cpus(home_cpus, home_busy) * cpus - wait_times_cpus(cpus, busy) * home_cpus -
		home_cpus * cpus;
	if (less < 0)
		return 0;
	own_free = (int64_t) a->plan->groups[g].ncpus - a->running[g];
	if (own_free >= NS_MAX_CPUS)
		own_free = NS_MAX_CPUS - 1;
	if (own_free <= -NS_MAX_CPUS)
		own_free = -(NS_MAX_CPUS - 1);
	return 1 + less * 2 * NS_MAX_CPUS + own_free + NS_MAX_CPUS;
}

int
ns_lend_statement(const ns_plan *plan, const ns_settings *settings, const uint32_t *running,
				  const uint32_t *away, int home, const ns_cpuset *reach)
{
	statement_room_arg arg = {plan, running, away, reach, home};
	int64_t		cpus,
				busy;
	int			g;

	unit_of(plan, running, NULL, home, &cpus, &busy);
	if (busy < cpus)
		return home;
	g = nearest_with_room(plan, settings, plan->groups[home].node, !plan->groups_share_node,
						  statement_room, &arg);
	return g >= 0 ? g : home;
}
