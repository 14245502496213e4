/*
 * statement_lending.c - a statement that starts while every CPU of its group
 * runs one already is lent the nearest idle group's CPUs until its end
 *
 * The scheduler's lending (lending.c) sees work wait a tick after it began,
 * and a burst of short statements is over by then.  So each statement is
 * counted in the group it runs in (one atomic add on that group's own cache
 * line at its start, one subtract at its end), and one that starts where its
 * group's CPUs (its node's, where the groups of a node share them) all run
 * a statement already asks the core (ns_lend_statement) for the nearest
 * group in reach with a CPU that runs none.  It binds itself to that group's
 * CPUs alone, which moves it there at once, then to those and its own, so
 * that a long statement whose home idles again may go back (the kernel
 * balances it as any other), and to its own alone at its end.
 * Nothing else moves: its home, its load and its memory stay where they are
 * (memory.c allocates on the home node while it may run elsewhere).
 *
 * A statement is the outermost executor run or utility statement of a
 * backend or parallel worker (a DO block's loops, a CREATE INDEX), from its
 * start to its end, or to the end of the (sub)transaction it started in
 * where an error skipped that, or where it ends transactions itself (a
 * VACUUM).  One that
 * waits for a lock or for I/O counts as running: the counts see statements,
 * not the kernel's run queues, and the tick corrects what they miss.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "numasched.h"
#include "ns_lend.h"

static const void *counted_statement = NULL; /* the outermost statement */
static int	counted_group = -1;			/* the group it is counted in */
static SubTransactionId counted_subxact;
static bool visiting = false;			/* bound to counted_group's CPUs */
static uint32 *running_now;				/* the counts, as the core reads them */
static bool callbacks_registered = false;

static void end_counted(void);

static void
on_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		end_counted();
}

static void
on_subxact_abort(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && counted_statement != NULL && counted_subxact == mySubid)
		end_counted();
}

/* Whether statements of this process may be lent CPUs: counting costs too. */
static bool
may_lend(const numasched_slot *slot)
{
	return numasched_enabled && numasched_lend_idle_cpus && numasched_lend_at_start &&
		slot->pid == MyProcPid &&
		slot->group >= 0 && slot->bound && !slot->background && !numasched_companion_in_force() &&
		numasched_groups_to_lend_between();
}

/* The counts of the groups from..to-1, read without the lock. */
static void
read_running(int from, int to)
{
	for (int g = from; g < to; g++)
		running_now[g] = pg_atomic_read_u32(&numasched_running[g].statements);
}

/* Moves this process onto group "to"'s CPUs, which it may use until the end of its statement. */
static bool
visit(numasched_slot *slot, int home, int to)
{
	ns_cpuset	cpus;
	bool		bound = false;

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	/* a move, regroup or reload since the counts were read: stay */
	if (slot->pid == MyProcPid && slot->group == home && slot->bound && to < numasched_state->ngroups &&
		!numasched_companion_in_force() &&
		numasched_bind_slot_locked(slot, &numasched_shared_plan()->groups[to].cpus))
	{
		slot->visit_group = to;
		numasched_slot_kernel_cpus(slot, &cpus);
		bound = numasched_bind_slot_locked(slot, &cpus);
		if (!bound)
		{
			/* home again: the books name no mask the kernel has not */
			slot->visit_group = -1;
			numasched_slot_kernel_cpus(slot, &cpus);
			(void) numasched_bind_slot_locked(slot, &cpus);
		}
	}
	numasched_release();
	if (bound)
		numasched_count(STAT_STATEMENT_LENDS, 1);
	return bound;
}

void
numasched_statement_start(const void *statement)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];
	const ns_plan *plan;
	ns_settings settings;
	int			home = slot->group;
	int			node;
	int			to;

	/* a statement inside the outermost one runs where that one does */
	if (counted_statement != NULL || !may_lend(slot))
		return;
	if (!callbacks_registered)
	{
		RegisterXactCallback(on_xact_end, NULL);
		RegisterSubXactCallback(on_subxact_abort, NULL);
		running_now = MemoryContextAllocZero(TopMemoryContext,
											 Max(numasched_state->max_groups, 1) * sizeof(uint32));
		callbacks_registered = true;
	}
	plan = numasched_shared_plan();
	if (home >= plan->ngroups)
		return;
	counted_statement = statement;
	counted_group = home;
	counted_subxact = GetCurrentSubTransactionId();
	pg_atomic_fetch_add_u32(&numasched_running[home].statements, 1);

	/* the counts of its own node, without this statement: a CPU free at home? */
	node = plan->groups[home].node;
	read_running(plan->node_first_group[node], plan->node_first_group[node] + plan->node_ngroups[node]);
	running_now[home] = running_now[home] > 0 ? running_now[home] - 1 : 0;
	if (ns_lend_statement_fits(plan, running_now, home))
		return;
	read_running(0, plan->node_first_group[node]);
	read_running(plan->node_first_group[node] + plan->node_ngroups[node], plan->ngroups);
	numasched_settings(&settings);
	to = ns_lend_statement(plan, &settings, running_now, home, numasched_slot_reach(slot));
	if (to == home)
		return;
	pg_atomic_fetch_add_u32(&numasched_running[to].statements, 1);
	pg_atomic_fetch_sub_u32(&numasched_running[home].statements, 1);
	counted_group = to;
	visiting = visit(slot, home, to);
}

static void
end_counted(void)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];

	if (counted_statement == NULL)
		return;
	counted_statement = NULL;
	pg_atomic_fetch_sub_u32(&numasched_running[counted_group].statements, 1);
	counted_group = -1;
	if (!visiting)
		return;
	visiting = false;
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	/* unless a move, a regroup or the companion ended the visit already */
	if (slot->pid == MyProcPid && slot->visit_group >= 0)
	{
		ns_cpuset	cpus;

		slot->visit_group = -1;
		numasched_slot_kernel_cpus(slot, &cpus);
		slot->bound = numasched_bind_slot_locked(slot, &cpus);
	}
	numasched_release();
}

void
numasched_statement_end(const void *statement)
{
	if (statement == counted_statement)
		end_counted();
}
