/*
 * statement_lending.c - a statement that would wait a whole statement for a
 * CPU of its group is lent the CPUs of the nearest group where it would not,
 * until its end
 *
 * The scheduler's lending (lending.c) sees work wait a tick after it began,
 * and a burst of short statements is over by then.  So each statement is
 * counted in the group it runs in (one atomic add on that group's own cache
 * line at its start, one subtract at its end), and one that starts where its
 * group's CPUs (its node's, where the groups of a node share them) all run
 * a statement already asks the core (ns_lend_statement) for the nearest
 * group in reach where it would wait a statement less.  It binds itself to that group's
 * CPUs alone, which moves it there at once, then to those and its own, so
 * that a long statement whose home idles again may go back (the kernel
 * balances it as any other), and to its own alone at its end.
 * Nothing else moves: its home, its load and its memory stay where they are
 * (memory.c allocates on the home node while it may run elsewhere), and it
 * is counted away from home, so that no statement of the group it visits
 * takes its home's CPU in exchange.
 *
 * A statement is the outermost executor run or utility statement of a
 * backend or parallel worker (a DO block's loops, a CREATE INDEX), from its
 * start to its end, or to the end of the (sub)transaction it started in
 * where an error skipped that, or where it ends transactions itself (a
 * VACUUM).  One that waits for a lock or for I/O counts as running: the
 * counts see statements, not the kernel's run queues, and the tick corrects
 * what they miss.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "backend/statement_lending.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/state.h"
#include "core/ns_lend.h"

static const void *counted_statement = NULL; /* the outermost statement */
static int	counted_group = -1;			/* the group it is counted in */
static int	counted_home;				/* its own group: counted away from it if lent another */
static SubTransactionId counted_subxact;
static uint32 *running_now;				/* the counts, as the core reads them */
static uint32 *away_now;
static numasched_slot *my_slot;

/*
 * What a statement looks up once per plan and after a change of the
 * settings that turn counting off (numasched_forget_lend_plan): whether it
 * counts at all (on one node with the defaults there are no groups to lend
 * between, and a statement costs two loads), and its group's unit (the
 * groups that share its CPUs, ns_lend_unit), kept while its group stays what
 * it was.
 */
bool		numasched_lend_plan_lends = false;	/* under numasched_lend_plan_generation (settings.c) */
static int	unit_group = -1;
static int	unit_first;
static int	unit_ngroups;
static int	unit_cpus;

static ExecutorEnd_hook_type prev_executor_end_hook = NULL;

static void end_counted(void);
static void executor_end(QueryDesc *queryDesc);

static void
on_xact_end(XactEvent event, void *arg)
{
	if (counted_statement != NULL &&
		(event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
		 event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT))
		end_counted();
}

static void
on_subxact_abort(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && counted_statement != NULL && counted_subxact == mySubid)
		end_counted();
}

/* A plan of "generation" (a first look). */
static pg_noinline void
look_at_plan(uint32 generation)
{
	numasched_lend_plan_generation = generation;
	numasched_lend_plan_lends = numasched_enabled && numasched_lend_idle_cpus && numasched_lend_at_start &&
		numasched_groups_to_lend_between();
	unit_group = -1;
}

/* Counted from now on: its end too (a process that never counts has no hook at its end). */
static void
start_counting(void)
{
	RegisterXactCallback(on_xact_end, NULL);
	RegisterSubXactCallback(on_subxact_abort, NULL);
	running_now = MemoryContextAllocZero(TopMemoryContext, Max(numasched_state->max_groups, 1) * sizeof(uint32));
	away_now = MemoryContextAllocZero(TopMemoryContext, Max(numasched_state->max_groups, 1) * sizeof(uint32));
	prev_executor_end_hook = ExecutorEnd_hook;
	ExecutorEnd_hook = executor_end;
	my_slot = &numasched_slots[numasched_procno(MyProc)];
}

/* The unit of group "home" (a first look); false: no such group. */
static pg_noinline bool
look_at_unit(int home)
{
	const ns_plan *plan = numasched_shared_plan();

	if (home >= plan->ngroups)
		return false;
	unit_group = home;
	ns_lend_unit(plan, home, &unit_first, &unit_ngroups, &unit_cpus);
	return true;
}

/* The statements running in the groups of the unit of "home" but "home". */
static pg_noinline uint32
running_beside(int home)
{
	uint32		running = 0;

	for (int g = unit_first; g < unit_first + unit_ngroups; g++)
		if (g != home)
			running += pg_atomic_read_u32(&numasched_running[g].statements);
	return running;
}

/* The counts of the groups below "to", read without the lock. */
static void
read_running(int to)
{
	for (int g = 0; g < to; g++)
	{
		running_now[g] = pg_atomic_read_u32(&numasched_running[g].statements);
		away_now[g] = pg_atomic_read_u32(&numasched_running[g].away);
	}
}

/* Moves this process onto group "to"'s CPUs, which it may use until the end of its statement. */
static bool
visit(numasched_slot *slot, int home, int to)
{
	int			visit = -1;
	bool		bound;

	numasched_lock_to_decide(2);
	/* a move, regroup or reload since the counts were read: stay */
	if (slot->pid == MyProcPid && slot->group == home && slot->bound && to < numasched_state->ngroups &&
		!numasched_companion_in_force())
		visit = numasched_bind_visit_locked(slot, to);
	numasched_release();
	/* refused, it is home again: the books name no mask the kernel has not */
	bound = visit >= 0 && numasched_told(visit, NULL);
	if (bound)
		numasched_count(STAT_STATEMENT_LENDS, 1);
	return bound;
}

/*
 * The statement counted in "home" would wait for a CPU there: it is lent
 * one elsewhere if it would wait a statement less (out of the way of every
 * statement that fits).
 */
static pg_noinline void
lend_at_start(numasched_slot *slot, int home)
{
	ns_settings settings;
	int			to;

	read_running(numasched_shared_plan()->ngroups);
	running_now[home] = running_now[home] > 0 ? running_now[home] - 1 : 0;
	numasched_settings(&settings);
	to = ns_lend_statement(numasched_shared_plan(), &settings, running_now, away_now, home,
						   numasched_slot_reach(slot));
	if (to == home || !visit(slot, home, to))
		return;

	/*
	 * Counted where it runs, and away from home: the statements of the group
	 * it visits then count it as their home's (ns_lend_statement), and do not
	 * take its home's CPU on the count (each would run away from its memory,
	 * swapped with the visitor for as long as both run); where work queues
	 * behind the visitor and its home idles, the kernel's balancing pulls it
	 * home, as its mask allows.
	 */
	pg_atomic_fetch_add_u32(&numasched_running[to].statements, 1);
	pg_atomic_fetch_sub_u32(&numasched_running[home].statements, 1);
	pg_atomic_fetch_add_u32(&numasched_running[home].away, 1);
	counted_group = to;
}

/*
 * Counting costs every statement: its way, while a CPU of its unit is free,
 * is a few loads, one atomic add here and one subtract at its end.
 */
void
numasched_statement_start(const void *statement)
{
	numasched_slot *slot = my_slot;
	uint32		generation = numasched_state->generation;
	int			home;
	int64		busy;

	if (generation != numasched_lend_plan_generation)
		look_at_plan(generation);
	/* a statement inside the outermost one runs where that one does */
	if (!numasched_lend_plan_lends || counted_statement != NULL)
		return;
	if (slot == NULL)
	{
		start_counting();
		slot = my_slot;
	}
	home = slot->group;
	if (home < 0 || slot->pid != MyProcPid || !slot->bound || slot->background ||
		numasched_companion_in_force())
		return;
	if (home != unit_group && !look_at_unit(home))
		return;
	counted_statement = statement;
	counted_group = counted_home = home;
	counted_subxact = GetCurrentSubTransactionId();
	/* with this statement: a CPU was free for it */
	busy = pg_atomic_fetch_add_u32(&numasched_running[home].statements, 1) + 1;
	if (unit_ngroups > 1)
		busy += running_beside(home);
	if (busy > unit_cpus)
		lend_at_start(slot, home);
}

/* Home again at the end of a visit, unless a move, a regroup or the companion ended it. */
static pg_noinline void
end_visit(numasched_slot *slot)
{
	/* in the commit callback, where an ERROR is a PANIC: one decision, in the room there always is */
	numasched_lock_to_decide(0);
	if (slot->pid == MyProcPid && slot->visit_group >= 0)
	{
		ns_cpuset	cpus;

		slot->visit_group = -1;
		numasched_slot_kernel_cpus(slot, &cpus);
		slot->bound = numasched_bind_slot_locked(slot, &cpus);
	}
	numasched_release();
}

static void
end_counted(void)
{
	if (counted_statement == NULL)
		return;
	counted_statement = NULL;
	pg_atomic_fetch_sub_u32(&numasched_running[counted_group].statements, 1);
	if (counted_group != counted_home)
	{
		pg_atomic_fetch_sub_u32(&numasched_running[counted_home].away, 1);
		end_visit(my_slot);
	}
	counted_group = -1;
}

void
numasched_statement_end(const void *statement)
{
	if (statement == counted_statement)
		end_counted();
}

static void
executor_end(QueryDesc *queryDesc)
{
	if (prev_executor_end_hook)
		prev_executor_end_hook(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	if (queryDesc == counted_statement)
		end_counted();
}
