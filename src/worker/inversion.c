/*
 * inversion.c - a background process that holds a lock normal work waits
 * for runs at normal priority until nobody waits for it; and autogroup nice
 * values the kernel's rate limit refused are tried again
 *
 * The scheduler calls it every 100 ms.  Only a heavyweight lock's holders
 * are known outside the holder (lock_waits.c); an LWLock's are not.
 * Raising is the autogroup's nice back to 0 where that is how background
 * priority was given, else leaving SCHED_IDLE, which needs RLIMIT_NICE or
 * CAP_SYS_NICE.  A raised process stays raised until it has blocked nobody
 * for RAISED_FOR_MS: the kernel allows ten autogroup changes a second on the
 * whole machine, and a session that blocked normal work is likely to again
 * with its next transaction.
 *
 * A holder the kernel will not raise (SCHED_IDLE without the privilege)
 * runs on CPUs set aside instead, a CPU of its reach (shared with the other
 * such holders), and every other placed process is bound without them
 * (state.c keeps it off), so that its SCHED_IDLE competes with nothing of
 * ours; they are given back once it has blocked nobody for
 * SET_ASIDE_FOR_MS.  At least one usable CPU is never set aside.
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "worker/inversion.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/report.h"
#include "backend/state.h"
#include "worker/lock_waits.h"

/* how long a raised process stays raised after it last blocked anybody */
#define RAISED_FOR_MS 5000
/* and a CPU stays set aside, which every other process does without */
#define SET_ASIDE_FOR_MS 200

static bool *blocks_normal;		/* per slot, this tick */
static pid_t *blocked_pid;		/* per slot: the process last seen blocking */
static TimestampTz *blocked_at; /* and when */
static pid_t *waited_last_tick;	/* per slot: the normal process seen waiting then */
static MemoryContext guard_context = NULL;

void
numasched_inversion_start(void)
{
	blocks_normal = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(bool));
	blocked_pid = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(pid_t));
	blocked_at = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(TimestampTz));
	waited_last_tick = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(pid_t));
	guard_context = AllocSetContextCreate(TopMemoryContext, "numasched inversion guard",
										  ALLOCSET_SMALL_SIZES);
}

static void raise_blockers(void);
static void retry_pending(void);

/* Whether the process of slot i waits in a heavyweight lock's queue now. */
static bool
waits_for_lock(int i)
{
	return (ProcGlobal->allProcs[i].wait_event_info & 0xFF000000) == PG_WAIT_LOCK;
}

/*
 * Gives a background process its normal share for now, or takes it back, the
 * way background priority is given here, told once the lock is released;
 * without the privilege to leave SCHED_IDLE the kernel refuses, and it stays
 * as it was.  Lock held exclusively.
 */
static void
set_raised_locked(numasched_slot *slot, bool raise)
{
	bool		was_raised = slot->raised;

	slot->raised = raise;
	if (numasched_retier_slot_locked(slot, slot->background, was_raised) >= 0)
		numasched_report_later(DEBUG1, "numasched %s process %d: %s", raise ? "raises" : "lowers again", (int) slot->pid,
							   raise ? "it holds a lock a normal process waits for" : "nobody waits for its locks now");
}

bool
numasched_inversion_tick(void)
{
	bool		any_background = false;
	bool		any_raised = false;
	bool		any_waiting = false;
	bool		any_pending = false;
	MemoryContext old;

	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];

		blocks_normal[i] = false;
		if (slot->pid == 0)
			continue;
		/* a SET back to normal may wait for the rate limit too */
		any_pending |= slot->autogroup_pending;
		if (!slot->background)
			continue;
		any_background = true;
		any_raised |= slot->raised || slot->aside;
	}
	if (!any_background)
	{
		/* the last holder with CPUs set aside left: the others have them back */
		if (numasched_state->set_aside_changed)
			raise_blockers();
		if (any_pending)
			retry_pending();
		return any_pending;
	}

	/*
	 * Normal processes in a heavyweight lock's queue: whom do they wait for,
	 * and whom do those wait for if they wait themselves (a row's second
	 * waiter queues on the tuple lock of the first, which waits for the
	 * holder's transaction)?  One look at the lock table, which holds all
	 * its partitions at once: only when a process was seen waiting on two
	 * ticks in a row, not for the short waits of busy OLTP.
	 */
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		pid_t		pid = numasched_slots[i].pid;
		bool		waits = pid != 0 && !numasched_slots[i].background && waits_for_lock(i);

		any_waiting |= waits && waited_last_tick[i] == pid;
		waited_last_tick[i] = waits ? pid : 0;
	}
	if (any_waiting)
	{
		old = MemoryContextSwitchTo(guard_context);
		(void) numasched_mark_background_blockers(blocks_normal);
		MemoryContextSwitchTo(old);
		MemoryContextReset(guard_context);
	}
	if (any_waiting || any_raised || numasched_state->set_aside_changed)
		raise_blockers();
	if (any_pending || any_waiting || any_raised)
		retry_pending();
	return true;
}

/*
 * The autogroup changes the kernel's rate limit refused, after the raises of
 * this tick (which come first): decided again from the slot as it is now,
 * so that a SET or a raise meanwhile is never undone.
 */
static void
retry_pending(void)
{
	numasched_lock_to_decide_for_all();
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];

		if (slot->pid != 0 && slot->autogroup_pending)
		{
			slot->autogroup_pending = false;
			(void) numasched_retier_slot_locked(slot, slot->background, slot->raised);
		}
	}
	numasched_release();
}

/*
 * The CPUs set aside, worked out afresh from the holders that run there: a
 * holder none of whose CPUs is set aside yet adds the last of them, as long
 * as one usable CPU is left for everybody else; the others share what is
 * set aside.  Lock held exclusively.
 */
static void
work_out_set_aside_locked(void)
{
	ns_cpuset	cpus;
	ns_cpuset	reach;
	ns_cpuset	shared;
	int			usable = ns_cpuset_count(&numasched_machine->usable);
	int			n = 0;

	ns_cpuset_zero(&cpus);
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		int			last = -1;

		if (slot->pid == 0 || !slot->aside || slot->group < 0)
			continue;
		numasched_group_cpus_for(slot, slot->group, &reach);
		ns_cpuset_and(&shared, &reach, &cpus);
		if (!ns_cpuset_empty(&shared) || n + 1 >= usable)
			continue;
		for (int c = ns_cpuset_next(&reach, 0); c >= 0; c = ns_cpuset_next(&reach, c + 1))
			last = c;
		if (last >= 0)
		{
			ns_cpuset_set(&cpus, last);
			n++;
		}
	}
	numasched_state->set_aside = cpus;
}

/*
 * The CPUs set aside worked out again after a holder came or went, and
 * every placed process bound anew; lock held exclusively.
 */
static void
rebind_around_set_aside_locked(void)
{
	numasched_state->set_aside_changed = false;
	work_out_set_aside_locked();
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		ns_cpuset	cpus;

		if (slot->pid == 0 || slot->group < 0 || !slot->bound)
			continue;
		numasched_slot_kernel_cpus(slot, &cpus);
		slot->bound = numasched_bind_slot_locked(slot, &cpus);
	}
}

/*
 * Raises the background processes that blocked a normal one within the last
 * RAISED_FOR_MS, and lowers the others raised before; sets a CPU aside for
 * those that blocked one within SET_ASIDE_FOR_MS and could not be raised.
 */
static void
raise_blockers(void)
{
	TimestampTz now = GetCurrentTimestamp();

	numasched_lock_to_decide_for_all();
	/* raising first: with the kernel's rate limit, what helps a waiter now comes first */
	for (int pass = 0; pass < 2; pass++)
		for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
		{
			numasched_slot *slot = &numasched_slots[i];
			bool		raise;

			if (slot->pid == 0 || !slot->background)
				continue;
			if (blocks_normal[i])
			{
				blocked_pid[i] = slot->pid;
				blocked_at[i] = now;
			}
			raise = blocked_pid[i] == slot->pid &&
				now < TimestampTzPlusMilliseconds(blocked_at[i], RAISED_FOR_MS);
			if (raise != slot->raised && raise == (pass == 0))
				set_raised_locked(slot, raise);
		}
	/* told, and what the kernel would not raise is not raised in the books */
	numasched_release();

	numasched_lock_to_decide_for_all();
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		bool		aside;

		if (slot->pid == 0 || !slot->background)
			continue;
		aside = !slot->raised && blocked_pid[i] == slot->pid &&
			now < TimestampTzPlusMilliseconds(blocked_at[i], SET_ASIDE_FOR_MS);
		if (aside != slot->aside)
		{
			slot->aside = aside;
			numasched_state->set_aside_changed = true;
			numasched_report_later(DEBUG1, "numasched %s process %d: %s", aside ? "sets CPUs aside for" : "gives back the CPUs set aside for",
								   (int) slot->pid, aside ? "it holds a lock a normal process waits for, and cannot be raised" : "nobody waits for its locks now");
		}
	}
	if (numasched_state->set_aside_changed)
		rebind_around_set_aside_locked();
	numasched_release();
}
