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

/* room for the decisions of a placement, a SET or a statement's visit */
#define MIN_CAPACITY 4

/* how long a process leaving numasched waits for another's telling to it */
#define IN_FLIGHT_WAIT_MS 10000

typedef enum telling_kind
{
	TELL_CPUS,
	TELL_TIER
} telling_kind;

/*
 * A decision to tell.  Its CPU sets are kept in the words the machine's
 * CPUs need (cpu_words), beside the array: an ns_cpuset is 1 kB, and a
 * process keeps the room for its tellings for its life.
 */
typedef struct telling
{
	int			slot;
	pid_t		pid;
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
	/* the kernel's answer */
	bool		told;
	bool		autogroup_pending;
	int			err;			/* why it was refused: at this offset of refusals */
} telling;

static telling *tellings = NULL;
static uint64 *telling_words = NULL;	/* per telling: its CPUs, then was_told */
static int	ntellings = 0;
static int	capacity = 0;
static int	cpu_words = 0;
/* the refusals' messages of the batch, one after the other */
static char *refusals = NULL;
static Size refusals_len = 0;
static Size refusals_size = 0;
/* the tellings were told: kept for their callers until the next decision */
static bool told_already = false;

/* The kernel's words for a refusal. */
static const char *
err_of(const telling *t)
{
	return t->err >= 0 ? refusals + t->err : t->told ? "" : "out of memory";
}

static void
pack_cpus(int i, int which, const ns_cpuset *cpus)
{
	memcpy(&telling_words[(2 * i + which) * cpu_words], cpus->bits, cpu_words * sizeof(uint64));
}

static void
unpack_cpus(int i, int which, ns_cpuset *cpus)
{
	ns_cpuset_zero(cpus);
	memcpy(cpus->bits, &telling_words[(2 * i + which) * cpu_words], cpu_words * sizeof(uint64));
}

/* Room for "more" tellings after those of the batch in hand. */
static void
reserve(int more)
{
	int			want;

	if (told_already)
	{
		ntellings = 0;
		told_already = false;
		refusals_len = 0;
	}
	if (cpu_words == 0 && numasched_machine == NULL)
		cpu_words = NS_SET_WORDS(NS_MAX_CPUS);
	else if (cpu_words == 0)
	{
		int			last = -1;

		/* every set told is of the machine's CPUs */
		for (int cpu = ns_cpuset_next(&numasched_machine->usable, 0); cpu >= 0;
			 cpu = ns_cpuset_next(&numasched_machine->usable, cpu + 1))
			last = cpu;
		for (int n = 0; n < numasched_machine->nnodes; n++)
			for (int cpu = ns_cpuset_next(&numasched_machine->nodes[n].cpus, last + 1); cpu >= 0;
				 cpu = ns_cpuset_next(&numasched_machine->nodes[n].cpus, cpu + 1))
				last = cpu;
		cpu_words = Max(1, NS_SET_WORDS(last + 1));
	}
	/* where room may have to be made, before the lock is taken */
	if (numasched_inject_fault == FAULT_OUT_OF_MEMORY && more > 0 && !LWLockHeldByMe(numasched_state->lock))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Injected by numasched.inject_fault.")));
	want = Max(MIN_CAPACITY, ntellings + more);
	if (want <= capacity)
		return;
	want = Max(want, capacity * 2);
	if (tellings == NULL)
	{
		tellings = MemoryContextAlloc(TopMemoryContext, want * sizeof(telling));
		telling_words = MemoryContextAlloc(TopMemoryContext, want * 2 * cpu_words * sizeof(uint64));
	}
	else
	{
		tellings = repalloc(tellings, want * sizeof(telling));
		telling_words = repalloc(telling_words, want * 2 * cpu_words * sizeof(uint64));
	}
	capacity = want;
}

void
numasched_lock_to_decide(int decisions)
{
	numasched_assert_unlocked();
	/* decisions an ERROR left untold are told now, before they are overtaken */
	if (!told_already && ntellings > 0)
		numasched_tell_kernel();
	reserve(decisions);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	if (numasched_inject_fault == FAULT_ERROR_UNDER_LOCK)
		elog(ERROR, "numasched.inject_fault: an error with numasched's lock held");
}

void
numasched_lock_to_decide_for_all(void)
{
	/* two tellings per process (its tier, its CPUs); a few may come meanwhile */
	numasched_lock_to_decide(2 * (numasched_occupied_slots() + 16));
}

static telling *
new_telling(numasched_slot *slot, telling_kind kind)
{
	telling    *t;

	/* room was made before the lock was taken; more only if a caller undercounted */
	if (told_already || ntellings == capacity)
		reserve(1);
	t = &tellings[ntellings++];
	memset(t, 0, sizeof(telling));
	t->slot = slot - numasched_slots;
	t->pid = slot->pid;
	t->kind = kind;
	t->undo_group = -1;
	t->err = -1;
	/* its process waits for it before it leaves numasched (numasched_wait_for_tellings) */
	pg_atomic_add_fetch_u32(&slot->in_flight, 1);
	return t;
}

/* A new decision: it overtakes every one before it. */
static telling *
new_decision(numasched_slot *slot, telling_kind kind)
{
	telling    *t = new_telling(slot, kind);

	if (kind == TELL_CPUS)
	{
		t->seq = ++slot->cpus_seq;
		slot->cpus_decider = MyProcPid;
	}
	else
	{
		t->seq = ++slot->tier_seq;
		slot->tier_decider = MyProcPid;
	}
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
	ns_cpuset	told;

	if (slot->pid == 0 || !alive(slot))
		return -1;
	t = new_decision(slot, TELL_CPUS);
	told = *cpus;
	numasched_keep_off_set_aside(slot->aside, &told);
	pack_cpus(t - tellings, 0, &told);
	pack_cpus(t - tellings, 1, &slot->told);
	t->was_bound = slot->bound;
	t->undo_group = undo_group;
	t->undo_visit = undo_visit;
	slot->told = told;
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
		*err = err_of(&tellings[i]);
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
				*err = err_of(&tellings[i]);
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

/*
 * The kernel's words for a refusal kept for the callers, at an offset of
 * the batch's refusals; -1 if there is no room.  No allocation may fail
 * here: a statement's visit ends in its transaction's commit callback.
 */
static int
keep_err(const char *err)
{
	Size		len = strlen(err) + 1;
	int			at = refusals_len;

	if (refusals_len + len > refusals_size)
	{
		Size		size = Max(refusals_size * 2, refusals_len + len + 256);
		char	   *more = MemoryContextAllocExtended(TopMemoryContext, size, MCXT_ALLOC_NO_OOM);

		if (more == NULL)
			return -1;
		if (refusals)
		{
			memcpy(more, refusals, refusals_len);
			pfree(refusals);
		}
		refusals = more;
		refusals_size = size;
	}
	memcpy(refusals + at, err, len);
	refusals_len += len;
	return at;
}

static void
tell(int i)
{
	telling    *t = &tellings[i];
	pid_t		pid = t->pid == MyProcPid ? 0 : t->pid;
	char		err[NS_ERRLEN] = "";

	/*
	 * Another process's pid may be yet another's by now: one placed from
	 * outside may be gone (its slot is forgotten within 100 ms).  One that
	 * placed itself waits for this telling before it leaves numasched or
	 * exits (numasched_wait_for_tellings): asked now, it is still the one.
	 */
	if (pid != 0 && BackendPidGetProc(t->pid) != &ProcGlobal->allProcs[t->slot])
	{
		t->told = false;
		snprintf(err, sizeof(err), "process %d is gone", (int) t->pid);
	}
	else if (t->kind == TELL_CPUS)
	{
		ns_cpuset	cpus;

		unpack_cpus(i, 0, &cpus);
		t->told = ns_bind_cpus(pid, &cpus, err, sizeof(err));
	}
	else
		t->told = tell_tier(pid, t->background, t->companion, &t->autogroup_pending,
							err, sizeof(err));
	if (!t->told)
		t->err = keep_err(err);
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
		numasched_report_later(DEBUG1, "numasched could not bind process %d: %s", (int) slot->pid, err_of(t));
		unpack_cpus(t - tellings, 1, &slot->told);
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
	numasched_report_later(DEBUG1, "numasched could not change the priority of process %d: %s", (int) slot->pid, err_of(t));
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
		pack_cpus(t - tellings, 0, &slot->told);
		pack_cpus(t - tellings, 1, &slot->told);
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

/* Its telling answered, or never to be: its process need not wait for it. */
static void
answered_locked(const telling *t)
{
	pg_atomic_sub_fetch_u32(&numasched_slots[t->slot].in_flight, 1);
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
		tell(i);
	/* each may be told again, or its refusal undone by a telling */
	reserve(end - from);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	for (int i = from; i < end; i++)
	{
		telling    *t = &tellings[i];
		numasched_slot *slot = &numasched_slots[t->slot];
		bool		cpus = t->kind == TELL_CPUS;
		uint32		seq = cpus ? slot->cpus_seq : slot->tier_seq;

		answered_locked(t);
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
		if ((cpus ? slot->cpus_decider : slot->tier_decider) == MyProcPid)
			continue;
		/* by another process, which may have told the kernel before we did */
		retell_locked(slot, t->kind);
	}
	LWLockRelease(numasched_state->lock);
}

/* Tellings of the batch never told: their processes need not wait for them; lock held. */
static void
drop_untold_locked(int from)
{
	for (int i = from; i < ntellings; i++)
		answered_locked(&tellings[i]);
	ntellings = from;
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
	if (from < ntellings)
	{
		LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
		drop_untold_locked(from);
		LWLockRelease(numasched_state->lock);
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

void
numasched_abandon_tellings(int code, Datum arg)
{
	/* an ERROR with the lock held ends here with it held in a worker, or would */
	if (LWLockHeldByMe(numasched_state->lock))
		LWLockRelease(numasched_state->lock);
	if (told_already || ntellings == 0)
		return;
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	drop_untold_locked(0);
	told_already = true;
	LWLockRelease(numasched_state->lock);
}

void
numasched_wait_for_tellings(const numasched_slot *slot)
{
	TimestampTz give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), IN_FLIGHT_WAIT_MS);

	numasched_assert_unlocked();
	while (pg_atomic_read_u32(unconstify(pg_atomic_uint32 *, &slot->in_flight)) > 0)
	{
		if (GetCurrentTimestamp() > give_up)
		{
			ereport(LOG,
					(errmsg("numasched: process %d leaves numasched while another process still tells the kernel about it",
							(int) MyProcPid)));
			return;
		}
		pg_usleep(1000L);
	}
}
