/*
 * lending.c - idle CPUs lent, within milliseconds, to groups whose work waits
 *
 * While numasched.lend_idle_cpus is on and there are groups to lend between,
 * the scheduler ticks here every NUMASCHED_LEND_TICK_MS (every
 * NUMASCHED_LEND_COLD_TICK_MS while none of our processes waited for a
 * second, nothing is lent and PSI showed no wait last time).  A tick asks PSI
 * whether any work waited for a CPU since the last one (one pread); only
 * then, or while something is lent, it reads every CPU's idle time
 * (/proc/stat) and lets the core (ns_lend.c) decide which busy group borrows
 * which idle one, and when it gives back.  A borrowing group's processes are
 * bound to its CPUs and the lender's, each as far as its class may reach,
 * and the kernel, balancing at every wakeup, runs the waiting work on the
 * idle CPU; placement binds a newcomer of the group the same way.  Nothing
 * is migrated: a process's home stays where it is, and so does its memory
 * (memory.c allocates it on the home node while it may run elsewhere).
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "worker/lending.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/report.h"
#include "backend/state.h"
#include "worker/schedstat.h"
#include "core/ns_lend.h"
#include "os/ns_cpustat.h"

/*
 * 5 ms: in numasched-plan bursts, lending then loses no more work than the
 * linux-like baseline on any fixture shape at 40-80% (at 10 ms it lost more
 * at 80% on epyc-nps4 and xeon-snc2: 1.09% against 0.89%); a tick this fast
 * runs only while work of ours waits or something is lent
 */
#define NUMASCHED_LEND_TICK_MS 5
/* the tick while none of our processes waited for a second: a wake costs too */
#define NUMASCHED_LEND_COLD_TICK_MS 50
/* how long a statement that woke the scheduler has it read at every tick */
#define NUMASCHED_LEND_WARM_MS 100

static ns_lending lending;
static ns_cpustat cpustat = {-1, -1, NULL, 0};
static bool cpustat_tried = false;
static bool cpustat_usable = false;
static uint64 *cpu_idle_us;		/* per CPU, at the last read */
static uint64 *cpu_idle_now;
static uint64 *group_idle_us;
static uint64 *group_waited_us;
static bool *group_lends;

/* per slot: the time its process had waited for a CPU when last read */
typedef struct wait_sample
{
	pid_t		pid;
	uint64		waited_ns;
	TimestampTz at;
	uint64		last_wait_us;	/* in the last tick it was looked at */
} wait_sample;
static wait_sample *waits;
static int *changed;
static bool *group_changed;
static bool *visiting;			/* per slot: to be moved onto its lender's CPUs */
static uint64 decided_tick_us;	/* the tick the last decision was made on */
static TimestampTz idle_read_at = 0;	/* 0: no read to compare with */
static TimestampTz last_tick = 0;
static TimestampTz hot_until = 0;	/* keep reading until then: a wait was seen */
static uint64 waited_us = 0;
static uint32 lending_generation;
static int	borrowers = 0;			/* groups borrowing now */

static int	ncpu_ids;			/* the highest usable CPU id + 1 */

static bool
open_cpustat(void)
{
	char		err[NS_ERRLEN];

	if (cpustat_tried)
		return cpustat_usable;
	cpustat_tried = true;
	if (!ns_cpustat_open(&cpustat, err, sizeof(err)))
	{
		ereport(LOG,
				(errmsg("numasched cannot lend idle CPUs"),
				 errdetail_from_core(err)));
		return false;
	}
	if (cpustat.pressure_fd < 0)
		ereport(LOG,
				(errmsg("numasched reads every CPU's idle time at each lending tick"),
				 errdetail("/proc/pressure/cpu cannot be read (a kernel without PSI, or psi=0), so it cannot tell quickly that no work waited.")));
	cpustat_usable = true;
	return true;
}

/*
 * Marks, per group that starts borrowing, the bound processes that waited
 * most in the last tick, about as many as waited on average and no more
 * than the lender has CPUs: they are moved onto the lender's CPUs at once.  A wider mask alone leaves a running process where
 * it is until the kernel's next balance of an idle CPU, tens of
 * milliseconds here.
 */
static void
choose_visitors(void)
{
	const ns_plan *plan = numasched_shared_plan();

	for (int g = 0; g < numasched_state->ngroups; g++)
	{
		int			lender = numasched_group_lender[g];
		int			want;

		if (!group_changed[g] || lender < 0)
			continue;
		/* about as many as waited on average through the tick, at least one */
		want = Min(plan->groups[lender].ncpus,
				   Max(1, (group_waited_us[g] + decided_tick_us - 1) / Max(decided_tick_us, 1)));
		for (int k = 0; k < want; k++)
		{
			int			best = -1;

			for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
				if (numasched_slots[i].group == g && numasched_slots[i].bound &&
					!numasched_slots[i].background && !visiting[i] &&
					waits[i].pid == numasched_slots[i].pid &&
					waits[i].at == idle_read_at && waits[i].last_wait_us > 0 &&
					(best < 0 || waits[i].last_wait_us > waits[best].last_wait_us))
					best = i;
			if (best < 0)
				break;
			visiting[best] = true;
		}
	}
}

/*
 * Binds the processes of the groups marked in group_changed to their
 * group's CPUs and their lender's (a visitor first to the lender's alone,
 * which moves it there); lock held.
 */
static void
rebind_changed_groups_locked(void)
{
	const ns_plan *plan = numasched_shared_plan();

	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		int			lender;
		ns_cpuset	cpus;

		if (slot->group < 0 || !slot->bound || slot->background || !group_changed[slot->group])
			continue;
		lender = numasched_lender_for_locked(slot->group, numasched_slot_reach(slot));
		/* one lent a CPU for its statement keeps it; it takes the lender at its end */
		if (lender == slot->lent_group || slot->visit_group >= 0)
		{
			slot->lent_group = lender;
			visiting[i] = false;
			continue;
		}
		numasched_group_cpus_for(slot, slot->group, &cpus);
		if (lender >= 0)
		{
			if (visiting[i])
				(void) numasched_bind_slot_locked(slot, &plan->groups[lender].cpus);
			ns_cpuset_or(&cpus, &cpus, &plan->groups[lender].cpus);
		}
		visiting[i] = false;
		if (numasched_bind_slot_locked(slot, &cpus))
			slot->lent_group = lender;
	}
}

void
numasched_lend_start(void)
{
	int			max_groups = Max(numasched_state->max_groups, 1);

	for (int cpu = ns_cpuset_next(&numasched_machine->usable, 0); cpu >= 0;
		 cpu = ns_cpuset_next(&numasched_machine->usable, cpu + 1))
		ncpu_ids = cpu + 1;
	if (!ns_lending_alloc(max_groups, &lending))
		elog(ERROR, "out of memory");
	cpu_idle_us = MemoryContextAllocZero(TopMemoryContext, Max(ncpu_ids, 1) * sizeof(uint64));
	cpu_idle_now = MemoryContextAllocZero(TopMemoryContext, Max(ncpu_ids, 1) * sizeof(uint64));
	group_idle_us = MemoryContextAllocZero(TopMemoryContext, max_groups * sizeof(uint64));
	group_waited_us = MemoryContextAllocZero(TopMemoryContext, max_groups * sizeof(uint64));
	group_lends = MemoryContextAllocZero(TopMemoryContext, max_groups * sizeof(bool));
	waits = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(wait_sample));
	visiting = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(bool));
	changed = MemoryContextAllocZero(TopMemoryContext, max_groups * sizeof(int));
	group_changed = MemoryContextAllocZero(TopMemoryContext, max_groups * sizeof(bool));
	lending_generation = numasched_state->generation;
	/* what a scheduler before this one lent is given back */
	numasched_end_lending();
}

void
numasched_end_lending(void)
{
	numasched_lock_to_decide_for_all();
	for (int g = 0; g < numasched_state->ngroups; g++)
	{
		group_changed[g] = numasched_group_lender[g] >= 0;
		if (group_changed[g])
			numasched_count(STAT_LEND_RETURNS, 1);
		numasched_group_lender[g] = -1;
	}
	/* and any process still lent CPUs, by a scheduler that ran before us */
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
		if (numasched_slots[i].lent_group >= 0 && numasched_slots[i].group >= 0)
			group_changed[numasched_slots[i].group] = true;
	rebind_changed_groups_locked();
	numasched_release();
	ns_lending_reset(&lending);
	borrowers = 0;
}

/* Lends and takes back what the core decided, unless the groups changed. */
static void
apply_changes(int n)
{
	numasched_lock_to_decide_for_all();
	if (numasched_state->generation != lending_generation)
	{
		/* a regroup ended all lending (regroup.c) */
		numasched_release();
		ns_lending_reset(&lending);
		borrowers = 0;
		lending_generation = numasched_state->generation;
		return;
	}
	memset(group_changed, 0, numasched_state->ngroups * sizeof(bool));
	for (int i = 0; i < n; i++)
	{
		int			g = changed[i];

		group_changed[g] = true;
		numasched_group_lender[g] = lending.lender[g];
		if (lending.lender[g] >= 0)
			numasched_report_later(DEBUG1, "numasched lends the CPUs of group %d to group %d", lending.lender[g], g);
		else
			numasched_report_later(DEBUG1, "numasched group %d gives back the CPUs it borrowed", g);
		numasched_count(lending.lender[g] >= 0 ? STAT_LENDS : STAT_LEND_RETURNS, 1);
	}
	/* counted afresh: a group may change twice in a tick, or turn to another lender */
	borrowers = 0;
	for (int g = 0; g < numasched_state->ngroups; g++)
		borrowers += lending.lender[g] >= 0;
	choose_visitors();
	rebind_changed_groups_locked();
	numasched_release();
}

/*
 * Sums, per group, how long its processes waited for a CPU since they were
 * last looked at, a second ago at most (a first look only starts the
 * count): for the groups that borrow or lend, and, while some CPU idles, for
 * those with less than half a CPU idle (they may borrow; one waiting process
 * is enough to know).  A group is looked at in every tick it is busy, so a
 * burst finds its processes looked at a tick or a pause ago; at the first
 * tick after a quiet spell (first_look), every process is, so that the next
 * tick can already lend.  Unlocked peeks at the slots: a stale group costs
 * one tick's decision at worst.
 */
static void
measure_groups(TimestampTz now, uint64 tick_us, int ngroups, bool some_idle, bool first_look)
{
	TimestampTz recent = TimestampTzPlusMilliseconds(now, -1000);

	memset(group_waited_us, 0, ngroups * sizeof(uint64));
	memset(group_lends, 0, ngroups * sizeof(bool));
	for (int g = 0; g < ngroups; g++)
		if (lending.lender[g] >= 0 && lending.lender[g] < ngroups)
			group_lends[lending.lender[g]] = true;
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		wait_sample *w = &waits[i];
		pid_t		pid = slot->pid;
		int			g = slot->group;
		bool		needed;
		uint64		ran_ns,
					waited_ns;

		/* a background process waits by design: it borrows nothing */
		if (pid == 0 || g < 0 || g >= ngroups || slot->background)
			continue;
		needed = first_look || lending.lender[g] >= 0 || group_lends[g] ||
			(some_idle && group_idle_us[g] * 2 < tick_us && group_waited_us[g] * 10 < tick_us);
		if (!needed || !numasched_read_schedstat(i, pid, &ran_ns, &waited_ns))
			continue;
		w->last_wait_us = 0;
		if (w->pid == pid && w->at >= recent && waited_ns >= w->waited_ns)
		{
			w->last_wait_us = (waited_ns - w->waited_ns) / 1000;
			group_waited_us[g] += w->last_wait_us;
		}
		w->pid = pid;
		w->waited_ns = waited_ns;
		w->at = now;
	}
}

bool
numasched_lend_quiet(void)
{
	return borrowers == 0 && idle_read_at == 0 && GetCurrentTimestamp() >= hot_until;
}

/*
 * Out of a doze the next burst is this statement's: what waits is read at
 * once and at every tick (a first look, which the next tick can lend on),
 * not after a cold tick.
 */
void
numasched_lend_wake(void)
{
	TimestampTz warm_until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														 NUMASCHED_LEND_WARM_MS);

	hot_until = Max(hot_until, warm_until);
	last_tick = 0;
}

long
numasched_lend_tick(void)
{
	TimestampTz now = GetCurrentTimestamp();
	const ns_plan *plan;
	ns_settings settings;
	uint64		tick_us;
	uint64		waited_now;
	bool		waited;
	bool		some_idle = false;
	long		interval;
	uint64		elapsed_us;
	ns_lend_sample sample;
	int			ngroups;
	int			n;

	if (!numasched_enabled || !numasched_lend_idle_cpus || !numasched_groups_to_lend_between() ||
		numasched_next_slot(0) < 0 || numasched_companion_in_force())
	{
		if (borrowers > 0)
			numasched_end_lending();
		idle_read_at = 0;
		return -1;
	}
	if (!open_cpustat())
		return -1;
	/* fast while lent, within a second of our wait, or while reading after a wait */
	interval = borrowers > 0 || now < hot_until || idle_read_at > 0 ?
		NUMASCHED_LEND_TICK_MS : NUMASCHED_LEND_COLD_TICK_MS;
	if (now < TimestampTzPlusMilliseconds(last_tick, interval))
		return Max(1, (TimestampTzPlusMilliseconds(last_tick, interval) - now) / 1000);
	elapsed_us = last_tick > 0 ? now - last_tick : interval * 1000;
	last_tick = now;

	/*
	 * No work waited anywhere, nothing lent, none of our processes waited in
	 * the last second: nothing to do.  Within a second of such a wait the
	 * reads go on, so that the next burst finds them fresh and is lent a
	 * CPU at its first tick; a wait of other processes alone (PSI counts
	 * every task) does not keep them going, and without such a wait the
	 * tick is slower.  Under a tenth of the time since the last look is the
	 * noise of a busy system, not a wait that lending could help.
	 */
	waited = !ns_cpustat_waited(&cpustat, &waited_now) ||
		waited_now > waited_us + elapsed_us / 10;
	waited_us = waited_now;
	if (!waited && borrowers == 0 && now >= hot_until)
	{
		idle_read_at = 0;
		return NUMASCHED_LEND_COLD_TICK_MS;
	}
	if (!ns_cpustat_idle(&cpustat, cpu_idle_now, ncpu_ids))
		return NUMASCHED_LEND_TICK_MS;
	/*
	 * Idle time since the last read, which was one tick ago unless the
	 * scheduler was held up (a long pass, a busy machine); a first read is
	 * compared at the next.
	 */
	tick_us = idle_read_at > 0 ? now - idle_read_at : 0;
	if (tick_us == 0)
	{
		memcpy(cpu_idle_us, cpu_idle_now, ncpu_ids * sizeof(uint64));
		idle_read_at = now;
		measure_groups(now, 0, Min(numasched_state->ngroups, numasched_state->max_groups), false, true);
		return NUMASCHED_LEND_TICK_MS;
	}

	LWLockAcquire(numasched_state->lock, LW_SHARED);
	plan = numasched_shared_plan();
	if (lending_generation != numasched_state->generation)
	{
		ns_lending_reset(&lending);
		borrowers = 0;
		lending_generation = numasched_state->generation;
	}
	ngroups = plan->ngroups;
	for (int g = 0; g < ngroups; g++)
	{
		group_idle_us[g] = 0;
		for (int cpu = ns_cpuset_next(&plan->groups[g].cpus, 0); cpu >= 0;
			 cpu = ns_cpuset_next(&plan->groups[g].cpus, cpu + 1))
			if (cpu_idle_now[cpu] > cpu_idle_us[cpu])
				group_idle_us[g] += cpu_idle_now[cpu] - cpu_idle_us[cpu];
		if (group_idle_us[g] * 2 >= tick_us)
			some_idle = true;
	}
	LWLockRelease(numasched_state->lock);
	memcpy(cpu_idle_us, cpu_idle_now, ncpu_ids * sizeof(uint64));
	idle_read_at = now;

	measure_groups(now, tick_us, ngroups, waited && some_idle, false);
	for (int g = 0; g < ngroups; g++)
		if (group_waited_us[g] * 10 >= tick_us)
		{
			hot_until = TimestampTzPlusMilliseconds(now, 1000);
			break;
		}

	LWLockAcquire(numasched_state->lock, LW_SHARED);
	numasched_settings(&settings);
	sample.idle_us = group_idle_us;
	sample.waited_us = group_waited_us;
	n = ns_lend_tick(plan, &settings, &sample, tick_us, &lending, changed);
	LWLockRelease(numasched_state->lock);
	decided_tick_us = tick_us;
	if (n > 0)
		apply_changes(n);
	return NUMASCHED_LEND_TICK_MS;
}
