/*
 * homing.c - processes the kernel ran on another node brought home when a
 * CPU of theirs idles
 *
 * Where the nodes share their CPUs (numasched.node_binding = preferred) a
 * normal process may run on every CPU in its reach, and the kernel gives
 * its waiting work an idle CPU of another node within a tick or two; it does
 * not bring it back (core/ns_homing.h).  Every NUMASCHED_HOMING_LOOK_MS,
 * the processes not waiting for their client or for something to do
 * (their wait event) and whose mask reaches beyond their home are read
 * (/proc/PID/stat), at most MAX_READS_PER_LOOK a look, the next going on
 * from there: one running or waiting to run away from its home CPUs while
 * one of them was idle through the look (/proc/stat) is bound to that CPU
 * alone, which moves it there at once, and then to its CPUs again, which
 * leaves it there; processes each on the next one's home CPUs (a pair, a
 * ring) move round the same way.  Their memory stayed at home meanwhile
 * (memory.c gives it their home node's).  Nothing is read while no CPU
 * idled at all since the last look and nobody was away at it: the kernel
 * moves work to another node only onto an idle CPU.
 */
#include "postgres.h"

#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "worker/homing.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/report.h"
#include "backend/state.h"
#include "worker/schedstat.h"
#include "core/ns_homing.h"
#include "os/ns_cpustat.h"

/*
 * /proc/stat counts in hundredths of a second: over 50 ms a CPU idle
 * throughout reads 40-60 ms, one busy a third of it 30-40 (ns_homing.h's
 * 80%).  In numasched-plan bursts on epyc-nps4 at 80%, looks every 100, 50
 * and 20 ms kept 68.5, 78.5 and 89.7% of the CPU time local.
 */
#define NUMASCHED_HOMING_LOOK_MS 50
/* a look reads no more processes' files than this */
#define MAX_READS_PER_LOOK 32

typedef struct candidate
{
	int			slot;
	pid_t		pid;
	uint32		cpus_seq;		/* the decision it had when read */
} candidate;

static ns_cpustat cpustat = {-1, -1, NULL, 0};
static bool cpustat_usable = false;
static int	ncpu_ids;
static uint64 *idle_before;
static uint64 *idle_now;
static TimestampTz read_at = 0; /* 0: nothing to compare with */
static int	next_slot = 0;		/* where the next look starts reading */
static candidate *candidates;
static ns_away *away;
static int *to_cpu;
static bool away_last_look = false;

void
numasched_homing_start(void)
{
	char		err[NS_ERRLEN];

	for (int cpu = ns_cpuset_next(&numasched_machine->usable, 0); cpu >= 0;
		 cpu = ns_cpuset_next(&numasched_machine->usable, cpu + 1))
		ncpu_ids = cpu + 1;
	idle_before = MemoryContextAllocZero(TopMemoryContext, Max(ncpu_ids, 1) * sizeof(uint64));
	idle_now = MemoryContextAllocZero(TopMemoryContext, Max(ncpu_ids, 1) * sizeof(uint64));
	candidates = MemoryContextAlloc(TopMemoryContext, MAX_READS_PER_LOOK * sizeof(candidate));
	away = MemoryContextAlloc(TopMemoryContext, MAX_READS_PER_LOOK * sizeof(ns_away));
	to_cpu = MemoryContextAlloc(TopMemoryContext, MAX_READS_PER_LOOK * sizeof(int));
	if (numasched_machine->nnodes < 2)
		return;
	if (!ns_cpustat_open(&cpustat, err, sizeof(err)))
		ereport(LOG,
				(errmsg("numasched cannot bring processes home to an idle CPU"),
				 errdetail_from_core(err)));
	else
		cpustat_usable = true;
}

/*
 * Up to MAX_READS_PER_LOOK normal bound processes that may be running and
 * may run away from home (not one whose class keeps it on its node), from
 * where the last look stopped: the ones to read.  Lock held.
 */
static int
choose_candidates_locked(void)
{
	int			nslots = numasched_state->nslots;
	int			n = 0;

	for (int step = 0; step < nslots && n < MAX_READS_PER_LOOK; step++)
	{
		int			i = (next_slot + step) % nslots;
		numasched_slot *slot = &numasched_slots[i];
		uint32		waiting;
		ns_cpuset	elsewhere;

		if (slot->pid == 0 || slot->group < 0 || slot->background || !slot->bound)
			continue;
		/* one waiting for its client or for work runs nowhere */
		waiting = ProcGlobal->allProcs[i].wait_event_info & 0xFF000000;
		if (waiting == PG_WAIT_CLIENT || waiting == PG_WAIT_ACTIVITY)
			continue;
		ns_home_cpus(numasched_shared_plan(), slot->group, numasched_slot_home(slot), &away[n].home);
		ns_cpuset_andnot(&elsewhere, &slot->told, &away[n].home);
		if (ns_cpuset_empty(&elsewhere))
			continue;
		candidates[n].slot = i;
		candidates[n].pid = slot->pid;
		candidates[n].cpus_seq = slot->cpus_seq;
		n++;
		if (n == MAX_READS_PER_LOOK)
			next_slot = (i + 1) % nslots;
	}
	return n;
}

/* Those of the candidates running or waiting to run, kept in place with where they ran; their count. */
static int
read_candidates(int n)
{
	int			nrunning = 0;

	for (int k = 0; k < n; k++)
	{
		bool		runnable;
		int			cpu;

		if (!numasched_read_where(candidates[k].slot, candidates[k].pid, &runnable, &cpu) || !runnable)
			continue;
		candidates[nrunning] = candidates[k];
		if (nrunning != k)
			away[nrunning].home = away[k].home;
		away[nrunning].cpu = cpu;
		nrunning++;
	}
	return nrunning;
}

/*
 * The processes read that are still what their books said when chosen (one
 * gone, moved or rebound since, its home emptied, is left alone); how many
 * of them run away from their home CPUs.  Lock held.
 */
static int
forget_changed_locked(int n)
{
	int			naway = 0;

	for (int k = 0; k < n; k++)
	{
		numasched_slot *slot = &numasched_slots[candidates[k].slot];

		if (slot->pid != candidates[k].pid || slot->cpus_seq != candidates[k].cpus_seq || !slot->bound)
			ns_cpuset_zero(&away[k].home);
		else
			naway += away[k].cpu >= 0 && !ns_cpuset_test(&away[k].home, away[k].cpu);
	}
	return naway;
}

/* Each chosen one bound to its idle CPU alone, then to its CPUs again; lock held. */
static int
bring_home_locked(int n)
{
	int			brought = 0;

	for (int k = 0; k < n; k++)
	{
		numasched_slot *slot = &numasched_slots[candidates[k].slot];
		ns_cpuset	one;
		ns_cpuset	cpus;

		if (to_cpu[k] < 0)
			continue;
		ns_cpuset_zero(&one);
		ns_cpuset_set(&one, to_cpu[k]);
		if (!numasched_bind_slot_locked(slot, &one))
			continue;
		numasched_slot_kernel_cpus(slot, &cpus);
		(void) numasched_bind_slot_locked(slot, &cpus);
		brought++;
	}
	numasched_count(STAT_HOMECOMINGS, brought);
	return brought;
}

/* Whether any CPU idled at all between the two reads. */
static bool
some_idle_time(void)
{
	for (int cpu = 0; cpu < ncpu_ids; cpu++)
		if (idle_now[cpu] > idle_before[cpu])
			return true;
	return false;
}

long
numasched_homing_tick(bool *away_seen)
{
	TimestampTz now = GetCurrentTimestamp();
	uint64		elapsed_us;
	ns_cpuset	idle;
	int			n;
	int			brought = 0;
	bool		idled;

	*away_seen = false;
	if (!cpustat_usable || !numasched_enabled || !numasched_state->nodes_shared ||
		numasched_companion_in_force() || numasched_next_slot(0) < 0)
	{
		read_at = 0;
		away_last_look = false;
		return -1;
	}
	if (read_at > 0 && now < TimestampTzPlusMilliseconds(read_at, NUMASCHED_HOMING_LOOK_MS))
		return Max(1, (TimestampTzPlusMilliseconds(read_at, NUMASCHED_HOMING_LOOK_MS) - now) / 1000);
	if (!ns_cpustat_idle(&cpustat, idle_now, ncpu_ids))
		return NUMASCHED_HOMING_LOOK_MS;
	elapsed_us = read_at > 0 && now > read_at ? now - read_at : 0;
	(void) ns_idle_cpus(idle_before, idle_now, ncpu_ids, elapsed_us, &idle);
	idled = elapsed_us > 0 && some_idle_time();
	memcpy(idle_before, idle_now, ncpu_ids * sizeof(uint64));
	read_at = now;
	if (!idled && !away_last_look)
		return NUMASCHED_HOMING_LOOK_MS;

	LWLockAcquire(numasched_state->lock, LW_SHARED);
	n = choose_candidates_locked();
	LWLockRelease(numasched_state->lock);
	n = read_candidates(n);
	away_last_look = false;
	if (n == 0)
		return NUMASCHED_HOMING_LOOK_MS;

	numasched_lock_to_decide_for_all();
	*away_seen = away_last_look = forget_changed_locked(n) > 0;
	if (*away_seen && ns_choose_homecomings(&idle, n, away, to_cpu) > 0)
		brought = bring_home_locked(n);
	numasched_release();		/* tells the kernel */
	if (brought > 0)
		elog(DEBUG1, "numasched brought %d processes home", brought);
	return NUMASCHED_HOMING_LOOK_MS;
}
