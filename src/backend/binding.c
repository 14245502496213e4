/*
 * binding.c - what the kernel is told for a placed process: its CPUs and its
 * tier (background priority, the sched_ext companion), decided under
 * numasched's lock and told once the lock is released
 *
 * Every login, SET of a class and scheduler tick needs the lock, so no
 * system call is made while it is held (a cgroup.procs write can take a
 * grace period).  Whoever changes a slot's CPUs or tier writes the books and
 * the decision under the lock, each kind with a sequence number per slot;
 * numasched_release tells the kernel, then takes the lock again to record
 * what the kernel refused and to tell again any slot whose decision was
 * overtaken meanwhile: another process may have told the kernel an older
 * decision after this one.  So the last decision is the last one the kernel
 * keeps, as when the calls were made under the lock.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/memutils.h"

#include "backend/binding.h"
#include "backend/books.h"
#include "backend/priority.h"
#include "backend/report.h"
#include "backend/state.h"

/* a decision overtaken again and again is left to its next writer after this */
#define MAX_ROUNDS 8

typedef enum telling_kind
{
	TELL_CPUS,
	TELL_TIER
} telling_kind;

typedef struct telling
{
	int			slot;
	pid_t		pid;
	bool		outside;		/* placed from outside: it may exit meanwhile */
	uint32		seq;
	uint8		kind;			/* telling_kind */
	/* TELL_TIER: background or normal; under the companion or not */
	bool		background;
	bool		companion;
	/* what the books said before, put back if the kernel refuses */
	bool		was_background;
	bool		was_raised;
	bool		was_bound;
	int16		undo_group;		/* a move: the group it left; -1: none */
	bool		undo_visit;		/* a statement's visit: it ends */
	ns_cpuset	cpus;			/* TELL_CPUS */
	ns_cpuset	was_told;
	/* the kernel's answer */
	bool		told;
	bool		autogroup_pending;
	char		err[NS_ERRLEN];
} telling;

static telling *tellings = NULL;
static int	ntellings = 0;
static int	capacity = 0;
/* the tellings were told: kept for their callers until the next decision */
static bool told_already = false;

/* per slot: the sequence numbers of this process's own last decisions */
static uint32 *own_cpus_seq = NULL;
static uint32 *own_tier_seq = NULL;

static telling *
new_telling(numasched_slot *slot, telling_kind kind)
{
	telling    *t;

	if (told_already)
	{
		ntellings = 0;
		told_already = false;
	}
	if (ntellings == capacity)
	{
		capacity = Max(8, capacity * 2);
		tellings = tellings ?
			repalloc(tellings, capacity * sizeof(telling)) :
			MemoryContextAlloc(TopMemoryContext, capacity * sizeof(telling));
	}
	if (own_cpus_seq == NULL)
	{
		own_cpus_seq = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(uint32));
		own_tier_seq = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(uint32));
	}
	t = &tellings[ntellings++];
	memset(t, 0, offsetof(telling, cpus));
	t->slot = slot - numasched_slots;
	t->pid = slot->pid;
	t->outside = !slot->self_placed;
	t->kind = kind;
	t->undo_group = -1;
	t->told = false;
	t->err[0] = '\0';
	return t;
}

/* A new decision: it overtakes every one before it. */
static telling *
new_decision(numasched_slot *slot, telling_kind kind)
{
	telling    *t = new_telling(slot, kind);

	if (kind == TELL_CPUS)
		t->seq = own_cpus_seq[t->slot] = ++slot->cpus_seq;
	else
		t->seq = own_tier_seq[t->slot] = ++slot->tier_seq;
	return t;
}

/*
 * Whether the slot's process is still the one we decided for: one placed
 * from outside may be gone (its slot is forgotten within 100 ms), and its
 * pid must not be told anything should the kernel have given it to another
 * process.  One that placed itself gives its slot back before it exits.
 */
static bool
alive(const numasched_slot *slot)
{
	return slot->self_placed ||
		BackendPidGetProc(slot->pid) == &ProcGlobal->allProcs[slot - numasched_slots];
}

static int
decide_cpus(numasched_slot *slot, const ns_cpuset *cpus, int undo_group, bool undo_visit)
{
	telling    *t;

	if (slot->pid == 0 || !alive(slot))
		return -1;
	t = new_decision(slot, TELL_CPUS);
	t->cpus = *cpus;
	numasched_keep_off_set_aside(slot->aside, &t->cpus);
	t->was_told = slot->told;
	t->was_bound = slot->bound;
	t->undo_group = undo_group;
	t->undo_visit = undo_visit;
	slot->told = t->cpus;
	return t - tellings;
}

int
numasched_bind_locked(numasched_slot *slot, const ns_cpuset *cpus)
{
	return decide_cpus(slot, cpus, -1, false);
}

bool
numasched_bind_slot_locked(numasched_slot *slot, const ns_cpuset *cpus)
{
	return decide_cpus(slot, cpus, -1, false) >= 0;
}

int
numasched_bind_visit_locked(numasched_slot *slot, int group)
{
	ns_cpuset	cpus;

	/* its lender's CPUs alone first, which moves it there at once */
	if (!numasched_bind_slot_locked(slot, &numasched_shared_plan()->groups[group].cpus))
		return -1;
	slot->visit_group = group;
	numasched_slot_kernel_cpus(slot, &cpus);
	return decide_cpus(slot, &cpus, -1, true);
}

int
numasched_bind_move_locked(numasched_slot *slot, int group, const ns_cpuset *cpus)
{
	int			from = slot->group;
	int			i;

	if (slot->pid == 0 || !alive(slot))
		return -1;
	numasched_move_slot_locked(slot, group);
	i = decide_cpus(slot, cpus, from, false);
	slot->bound = true;
	return i;
}

int
numasched_retier_slot_locked(numasched_slot *slot, bool was_background, bool was_raised)
{
	telling    *t;

	if (slot->pid == 0 || !alive(slot))
		return -1;
	t = new_decision(slot, TELL_TIER);
	t->background = slot->background && !slot->raised;
	t->companion = numasched_state->companion;
	t->was_background = was_background;
	t->was_raised = was_raised;
	return t - tellings;
}

int
numasched_tellings_mark(void)
{
	return told_already ? 0 : ntellings;
}

bool
numasched_told(int i, const char **err)
{
	if (i < 0 || i >= ntellings)
		return false;
	if (err)
		*err = tellings[i].err;
	return tellings[i].told;
}

int
numasched_refusals_since(int mark, const char **err)
{
	int			refused = 0;

	for (int i = mark; i < ntellings; i++)
		if (!tellings[i].told)
		{
			refused++;
			if (err)
				*err = tellings[i].err;
		}
	return refused;
}

/*
 * The companion's tier: SCHED_EXT, background marked by nice 19 (a SCHED_EXT
 * process may not be SCHED_IDLE too); else out of SCHED_EXT, at the
 * priority of the way chosen at start.
 */
static bool
tell_tier(pid_t pid, bool background, bool companion, bool *autogroup_pending, char *err, size_t errlen)
{
	*autogroup_pending = false;
	if (companion)
		return ns_set_own_nice(pid, background ? NS_BACKGROUND_NICE : 0, err, errlen) &&
			(ns_is_sched_ext(pid) == 1 || ns_set_sched_ext(pid, true, err, errlen));
	if (ns_is_sched_ext(pid) == 1 && !ns_set_sched_ext(pid, false, err, errlen))
		return false;
	return numasched_set_priority(pid, background, autogroup_pending, err, errlen);
}

static void
tell(telling *t)
{
	pid_t		pid = t->pid == MyProcPid ? 0 : t->pid;

	/* its pid may be another process's by now (see alive) */
	if (t->outside && BackendPidGetProc(t->pid) != &ProcGlobal->allProcs[t->slot])
	{
		t->told = false;
		snprintf(t->err, sizeof(t->err), "process %d is gone", (int) t->pid);
		return;
	}

	if (t->kind == TELL_CPUS)
		t->told = ns_bind_cpus(pid, &t->cpus, t->err, sizeof(t->err));
	else
		t->told = tell_tier(pid, t->background, t->companion, &t->autogroup_pending,
							t->err, sizeof(t->err));
}

/*
 * The books as they were before a decision the kernel refused: a move or a
 * visit taken back (the kernel keeps the CPUs it had), else the process
 * marked unbound; a tier given back, and the CPUs that tier has.
 */
static void
refused_locked(telling *t, numasched_slot *slot)
{
	const ns_plan *plan = numasched_shared_plan();

	numasched_count(STAT_BIND_FAILURES, 1);
	if (t->kind == TELL_CPUS)
	{
		numasched_report_later(DEBUG1, "numasched could not bind process %d: %s", (int) slot->pid, t->err);
		slot->told = t->was_told;
		if (t->undo_group >= 0 && t->undo_group < numasched_state->ngroups && slot->group >= 0)
		{
			ns_loads_add(plan, numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
			ns_loads_add(plan, numasched_shared_loads(), t->undo_group, numasched_slot_load(slot));
			slot->group = t->undo_group;
			slot->node = plan->groups[t->undo_group].node;
			slot->cpus = plan->groups[t->undo_group].cpus;
			slot->bound = t->was_bound;
		}
		else if (t->undo_visit)
			slot->visit_group = -1;
		else
		{
			slot->bound = false;
			slot->lent_group = slot->visit_group = -1;
		}
		return;
	}
	numasched_report_later(DEBUG1, "numasched could not change the priority of process %d: %s", (int) slot->pid, t->err);
	slot->raised = t->was_raised;
	if (slot->background != t->was_background && slot->group >= 0)
	{
		ns_cpuset	cpus;

		ns_loads_add(plan, numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
		slot->background = t->was_background;
		ns_loads_add(plan, numasched_shared_loads(), slot->group, numasched_slot_load(slot));
		/* a background process's mask is its reach: a normal one, its group's */
		if (slot->bound)
		{
			numasched_slot_kernel_cpus(slot, &cpus);
			(void) decide_cpus(slot, &cpus, -1, false);
		}
	}
}

/*
 * The slot's decision in force told again, with its own sequence number:
 * the process that made it may be telling it too, and neither overtakes the
 * other.
 */
static void
retell_locked(numasched_slot *slot, telling_kind kind)
{
	telling    *t = new_telling(slot, kind);

	if (kind == TELL_CPUS)
	{
		t->seq = slot->cpus_seq;
		t->cpus = t->was_told = slot->told;
	}
	else
	{
		t->seq = slot->tier_seq;
		t->background = slot->background && !slot->raised;
		t->companion = numasched_state->companion;
		t->was_background = slot->background;
		t->was_raised = slot->raised;
	}
}

/*
 * Tells the kernel the tellings [from, end), then records, under the lock,
 * what it refused and tells again, in new tellings, what another process
 * decided since for a slot it told something older.
 */
static void
tell_round(int from, int end)
{
	for (int i = from; i < end; i++)
		tell(&tellings[i]);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	for (int i = from; i < end; i++)
	{
		telling    *t = &tellings[i];
		numasched_slot *slot = &numasched_slots[t->slot];
		bool		cpus = t->kind == TELL_CPUS;
		uint32		seq = cpus ? slot->cpus_seq : slot->tier_seq;

		if (slot->pid != t->pid)
			continue;			/* gone, its slot given back */
		if (seq == t->seq)
		{
			if (!t->told)
				refused_locked(t, slot);
			else if (!cpus)
				slot->autogroup_pending = t->autogroup_pending;
			continue;
		}
		/* decided again by ourselves later in this batch: that one tells it */
		if (seq == (cpus ? own_cpus_seq[t->slot] : own_tier_seq[t->slot]))
			continue;
		/* by another process, which may have told the kernel before we did */
		retell_locked(slot, t->kind);
	}
	LWLockRelease(numasched_state->lock);
}

void
numasched_tell_kernel(void)
{
	int			from = 0;

	numasched_assert_unlocked();
	if (told_already || ntellings == 0)
		return;
	/* the answers stay readable; a new decision starts a new batch */
	for (int round = 0; from < ntellings && round < MAX_ROUNDS; round++)
	{
		int			end = ntellings;

		tell_round(from, end);
		from = end;
	}
	told_already = true;
}

void
numasched_release(void)
{
	LWLockRelease(numasched_state->lock);
	numasched_tell_kernel();
	numasched_send_reported();
}
