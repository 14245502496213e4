/*
 * scheduler.c - the "numasched scheduler" background worker
 *
 * Every numasched.rebalance_interval it measures the CPU each placed process
 * ran and waited for since the last pass (/proc/PID/schedstat), counts it as
 * the process's load, and lets the core propose moves from the busiest groups
 * to idle groups, same node first, then, when the group waits for CPUs
 * (numasched.cross_node_moves), nodes in steal order, never beyond
 * numasched.max_steal_distance.  A moved process is not moved again for five
 * passes.  The books are updated under the lock, and the processes bound
 * (sched_setaffinity) once it is released (binding.c), in the order decided;
 * /proc is read and memory moved (move_pages) without it.
 *
 * Parallel workers of CREATE INDEX and VACUUM never enter the executor, so
 * they cannot place themselves: every 100 ms the scheduler looks for them
 * through the lock group and places from outside those it finds unplaced
 * twice in a row, and forgets their slots once they are gone.  On SIGHUP a
 * new groups_per_node regroups, and every placed process is re-bound to its
 * new group.  A process is never moved out of the groups of its workload
 * class, kept in its slot.  After SIGTERM or a crash the postmaster starts it
 * again within bgw_restart_time.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "worker/scheduler.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/companion.h"
#include "backend/memory.h"
#include "backend/placement.h"
#include "backend/regroup.h"
#include "backend/state.h"
#include "worker/doorbell.h"
#include "worker/inversion.h"
#include "worker/homing.h"
#include "worker/lending.h"
#include "worker/schedstat.h"
#include "os/ns_settle.h"

/* how often to look for parallel workers that are not placed yet */
#define DISCOVERY_INTERVAL_MS 100
#define MAX_MOVES_PER_PASS 64
/* dozing (doorbell.c): after a second without a statement, at most this long */
#define DOZE_AFTER_MS 1000
#define DOZE_MAX_MS 1000

/*
 * A process moved to another node, bound under the lock: logged and its
 * memory brought along once the lock is released.
 */
typedef struct node_move
{
	pid_t		pid;
	int			slot;
	uint32		moves;			/* the slot's count of moves once moved */
	int			from_node;
	int			to_node;
} node_move;

/* what the last pass saw of the process in each slot */
typedef struct pass_sample
{
	pid_t		pid;
	uint64		cpu_ns;			/* ran and waited */
	TimestampTz at;
} pass_sample;

static pass_sample *samples;
static node_move *node_moves;
static uint32 bound_generation;

/* a pass's scratch arrays, one entry per slot at most */
typedef struct measured_load
{
	int			slot;
	pid_t		pid;
	uint32		weight;
} measured_load;
static measured_load *measured;
static ns_proc *procs;
static int *proc_slot;

/*
 * The PGPROCs of background workers, [bgworkers_first, bgworkers_end):
 * parallel workers are background workers, so only these need looking at
 * every 100 ms.  Their range is fixed at server start (InitProcGlobal) and
 * differs between majors, so it is read from the PGPROCs themselves.
 */
static int	bgworkers_first;
static int	bgworkers_end;

/* per PGPROC: the pid of the worker the last scan saw unplaced, or 0 */
static pid_t *seen_unplaced;

static void
find_bgworker_procs(void)
{
	bgworkers_first = ProcGlobal->allProcCount;
	bgworkers_end = 0;
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
		if (ProcGlobal->allProcs[i].procgloballist == &ProcGlobal->bgworkerFreeProcs)
		{
			bgworkers_first = Min(bgworkers_first, (int) i);
			bgworkers_end = i + 1;
		}
}

static void
place_lock_group_members(void)
{
	for (int i = bgworkers_first; i < bgworkers_end; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		PGPROC	   *leader = proc->lockGroupLeader;
		const numasched_slot *leader_slot;

		/*
		 * Unlocked peeks; numasched_place checks the slot again under its
		 * lock.  An exited worker leaves its lock group, but its PGPROC
		 * keeps the pid: only a process in the proc array is placed.
		 */
		if (proc->pid == 0 || leader == NULL || leader == proc ||
			numasched_slots[i].pid == proc->pid ||
			BackendPidGetProc(proc->pid) != proc)
			continue;

		/*
		 * Nor one whose leader numasched does not place (numasched.enabled
		 * off for its role, a walsender): its placement would take the lock
		 * every tick only to find that.
		 */
		leader_slot = &numasched_slots[numasched_procno(leader)];
		if (leader_slot->pid != leader->pid || leader_slot->group < 0)
			continue;

		/*
		 * A query's worker places itself at ExecutorStart, milliseconds
		 * after it joins the lock group, as its worker number (spread)
		 * needs: only a worker still unplaced one scan later is ours.
		 */
		if (seen_unplaced[i] != proc->pid)
		{
			seen_unplaced[i] = proc->pid;
			continue;
		}
		numasched_place(proc, NUMASCHED_PARALLEL_WORKER, leader);
	}
}

/*
 * Measured load of the process in slot i since the last pass, in
 * NS_CPU_LOAD units: the CPU it would have used with a CPU of its own (the
 * time it ran and the time it waited for a CPU), so that a group with more
 * work than CPUs shows more load than CPUs, which is when a move to another
 * node pays (numasched.cross_node_moves).  False until a process has been
 * seen twice.
 */
static bool
measure(int i, pid_t pid, TimestampTz now, uint32 *weight)
{
	pass_sample *s = &samples[i];
	uint64		ran_ns,
				waited_ns,
				cpu_ns;
	bool		known = false;

	if (!numasched_read_schedstat(i, pid, &ran_ns, &waited_ns))
		return false;
	cpu_ns = ran_ns + waited_ns;
	if (s->pid == pid && now > s->at && cpu_ns >= s->cpu_ns)
	{
		double		cpus = (double) (cpu_ns - s->cpu_ns) / ((double) (now - s->at) * 1000.0);

		/* a backend is one thread: it cannot use more than one CPU */
		*weight = (uint32) Min(NS_CPU_LOAD, cpus * NS_CPU_LOAD + 0.5);
		known = true;
	}
	s->pid = pid;
	s->cpu_ns = cpu_ns;
	s->at = now;
	return known;
}

static int
node_of_cpu(int cpu)
{
	for (int n = 0; n < numasched_machine->nnodes; n++)
		if (ns_cpuset_test(&numasched_machine->nodes[n].cpus, cpu))
			return n;
	return -1;
}

/*
 * Whether the memory of a process moved to "to_node" should follow it now:
 * migrate_memory on, a memory policy (none leaves memory alone), a node with
 * memory to use, and the process not moved again since (by numasched_move or
 * a SET of its class; it settles on its new node itself), nor gone, nor
 * left where it was (the kernel refused the move).
 */
static bool
memory_follows(const node_move *m)
{
	numasched_slot *slot = &numasched_slots[m->slot];

	return numasched_migrate_memory && numasched_memory_policy != NS_MEMORY_NONE &&
		m->from_node != m->to_node &&
		ns_node_memory_usable(&numasched_machine->nodes[m->to_node]) &&
		numasched_memory_call_usable(NS_CALL_MOVE_PAGES) &&
		slot->pid == m->pid && slot->moves == m->moves && slot->node == m->to_node &&
		BackendPidGetProc(m->pid) != NULL;
}

/* After the lock is released: log the moves, bring memory along. */
static void
finish_node_moves(int n)
{
	char		err[NS_ERRLEN];

	for (int i = 0; i < n; i++)
	{
		node_move  *m = &node_moves[i];

		CHECK_FOR_INTERRUPTS();
		/* a shutdown does not wait for the memory of the moves left */
		if (ShutdownRequestPending)
			break;
		if (numasched_log_placements)
			ereport(LOG, (errmsg("numasched moved process %d from node %d to node %d",
								 (int) m->pid, numasched_machine->nodes[m->from_node].id,
								 numasched_machine->nodes[m->to_node].id)));
		/* the lock is released: unlocked reads, checked again just before */
		if (memory_follows(m))
		{
			/*
			 * Its private memory, as the process itself would move it at its
			 * next statement (which may be long in coming): move_pages over
			 * its private mappings.  migrate_pages would take shared buffers
			 * that only this process maps too.  On Linux 6.1 to 6.4 with NUMA
			 * balancing on, move_pages neither sees nor moves a page marked
			 * for a hinting fault (follow_page refuses PROT_NONE from
			 * 474098edac26 until d74943a2f3cd); NUMA balancing moves such a
			 * page itself when the process touches it again on its new node.
			 */
			ns_settle_result result;
			int			to_id = numasched_machine->nodes[m->to_node].id;

			if (ns_settle_private_memory(m->pid, to_id, false, &result, err, sizeof(err)))
			{
				numasched_count(STAT_PAGES_MIGRATED, result.moved);
				if (numasched_log_placements)
					ereport(LOG, (errmsg("numasched migrated %llu private pages of process %d from node %d to node %d",
										 (unsigned long long) result.moved, (int) m->pid,
										 numasched_machine->nodes[m->from_node].id, to_id)));
			}
			else
				elog(DEBUG1, "numasched could not migrate the pages of process %d: %s", (int) m->pid, err);
		}
	}
}

/*
 * After a regroup (reload), every placed process is bound to the CPUs of the
 * group it was counted into; one whose node is no longer used was placed on
 * another node, and its memory follows.  Lock held exclusively; returns the
 * number of node moves recorded.
 */
static int
rebind_after_regroup_locked(void)
{
	const ns_plan *plan = numasched_shared_plan();
	int			n = 0;

	if (bound_generation == numasched_state->generation)
		return 0;
	/* re-bound now: until the next regroup, nothing to compare */
	bound_generation = numasched_state->generation;
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		int			from_node;
		ns_cpuset	old_cpus = slot->cpus;
		ns_cpuset	cpus;

		/*
		 * Every one: its group's CPUs, a background process's reach or, with
		 * numasched.group_binding changed, what a group binds may differ.
		 */
		if (slot->group < 0)
			continue;
		from_node = node_of_cpu(ns_cpuset_next(&slot->cpus, 0));
		slot->cpus = plan->groups[slot->group].cpus;
		numasched_slot_kernel_cpus(slot, &cpus);
		slot->bound = numasched_bind_slot_locked(slot, &cpus);
		if (!slot->bound)
		{
			slot->cpus = old_cpus;
			continue;
		}
		if (from_node >= 0 && from_node != slot->node)
		{
			node_moves[n].pid = slot->pid;
			node_moves[n].slot = i;
			node_moves[n].moves = slot->moves;
			node_moves[n].from_node = from_node;
			node_moves[n].to_node = slot->node;
			n++;
		}
	}
	return n;
}

/*
 * Applies a regroup (a reload, or a new backend's newer settings) at once.
 * The exclusive lock is taken only after a reload of our own settings, which
 * may regroup, or when the groups changed since we last re-bound.
 */
static void
rebind_after_regroup(bool reloaded)
{
	int			n;

	if (!reloaded && bound_generation == numasched_state->generation)
		return;					/* an unlocked peek: checked again below */
	numasched_lock_to_decide_for_all();
	numasched_sync_plan();
	n = rebind_after_regroup_locked();
	numasched_release();
	finish_node_moves(n);
}

static void
rebalance_pass(void)
{
	TimestampTz now = GetCurrentTimestamp();
	ns_move		moves[MAX_MOVES_PER_PASS];
	ns_settings settings;
	const ns_plan *plan;
	int			nmeasured = 0;
	int			nprocs = 0;
	int			nmoves;
	int			nnode_moves;

	/* nothing placed, no regroup to apply: nothing to change, no lock */
	if (numasched_next_slot(0) < 0 && bound_generation == numasched_state->generation)
	{
		numasched_count(STAT_PASSES, 1);
		pg_atomic_write_u64(&numasched_state->last_pass, GetCurrentTimestamp());
		return;
	}

	/* read /proc without the lock, for the occupied slots only */
	numasched_schedstat_forget_gone();
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		pid_t		pid = numasched_slots[i].pid;

		if (pid != 0 && measure(i, pid, now, &measured[nmeasured].weight))
		{
			measured[nmeasured].slot = i;
			measured[nmeasured].pid = pid;
			nmeasured++;
		}
	}

	numasched_settings(&settings);
	numasched_lock_to_decide_for_all();
	numasched_sync_plan();
	plan = numasched_shared_plan();
	nnode_moves = rebind_after_regroup_locked();
	/* 0 is "never moved" to the core's cooldown: skipped when it wraps */
	if (++numasched_state->pass == 0)
		numasched_state->pass = 1;
	for (int m = 0; m < nmeasured; m++)
	{
		numasched_slot *slot = &numasched_slots[measured[m].slot];

		if (slot->pid != measured[m].pid || slot->group < 0)
			continue;			/* gone, or another process, since */
		if (!slot->background)
			ns_loads_add(plan, numasched_shared_loads(), slot->group,
						 (int64) measured[m].weight - (int64) slot->weight);
		slot->weight = measured[m].weight;
	}
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];

		/* a background process fills no group: nothing to balance */
		if (slot->group < 0 || slot->background)
			continue;
		procs[nprocs].group = slot->group;
		procs[nprocs].weight = slot->weight;
		procs[nprocs].moved_pass = slot->moved_pass;
		/* under compact, a parallel worker stays on its leader's node */
		procs[nprocs].keep_node = slot->keep_node ? slot->node : -1;
		/* and nobody is moved out of the groups of its class */
		procs[nprocs].allowed = numasched_slot_home(slot);
		proc_slot[nprocs++] = i;
	}
	nmoves = ns_rebalance(plan, &settings, procs, nprocs, numasched_state->pass,
						  moves, MAX_MOVES_PER_PASS);
	for (int m = 0; m < nmoves; m++)
	{
		numasched_slot *slot = &numasched_slots[proc_slot[moves[m].proc]];
		node_move  *r = &node_moves[nnode_moves];

		ns_cpuset	cpus = plan->groups[moves[m].to_group].cpus;

		/*
		 * The new group's CPUs alone, which moves it there at once (a mask
		 * its CPU is in would leave it running where it is); under the
		 * companion nothing is planted: its reach from there, the companion
		 * picks the CPU.
		 */
		if (numasched_companion_in_force())
			numasched_group_cpus_for(slot, moves[m].to_group, &cpus);
		/* a process the kernel refuses to move stays where it is (binding.c) */
		r->from_node = slot->node;
		if (numasched_bind_move_locked(slot, moves[m].to_group, &cpus) < 0)
			continue;
		r->pid = slot->pid;
		r->slot = proc_slot[moves[m].proc];
		r->moves = slot->moves;
		r->to_node = slot->node;
		nnode_moves++;
	}
	numasched_release();
	pg_atomic_write_u64(&numasched_state->last_pass, GetCurrentTimestamp());

	finish_node_moves(nnode_moves);
	numasched_count(STAT_PASSES, 1);
}

void
numasched_scheduler_main(Datum arg)
{
	TimestampTz last_pass = 0;
	TimestampTz next_pass = 0;
	TimestampTz last_discovery = 0;
	TimestampTz last_statement = 0;
	bool		dozing = false;
	bool		guarding = false;
	bool		homing = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (numasched_machine == NULL)
	{
		ereport(LOG, (errmsg("numasched scheduler has no topology and exits")));
		proc_exit(0);
	}
	if (pg_atomic_fetch_add_u64(&numasched_state->stats[STAT_SCHEDULER_STARTS], 1) > 0)
		ereport(LOG, (errmsg("numasched scheduler restarted")));

	samples = MemoryContextAllocZero(TopMemoryContext,
									 numasched_state->nslots * sizeof(pass_sample));
	numasched_schedstat_init();
	node_moves = MemoryContextAlloc(TopMemoryContext,
									(numasched_state->nslots + MAX_MOVES_PER_PASS) * sizeof(node_move));
	measured = MemoryContextAlloc(TopMemoryContext, numasched_state->nslots * sizeof(measured_load));
	procs = MemoryContextAlloc(TopMemoryContext, numasched_state->nslots * sizeof(ns_proc));
	proc_slot = MemoryContextAlloc(TopMemoryContext, numasched_state->nslots * sizeof(int));
	find_bgworker_procs();
	/* an ERROR ends the worker: no process waits for what it left untold */
	before_shmem_exit(numasched_abandon_tellings, 0);
	seen_unplaced = MemoryContextAllocZero(TopMemoryContext, ProcGlobal->allProcCount * sizeof(pid_t));
	/* a regroup may have happened while no scheduler ran */
	bound_generation = numasched_state->generation - 1;
	numasched_lend_start();
	numasched_homing_start();
	numasched_inversion_start();
	numasched_doorbell_start();
	/* a second awake after a start, as after a statement */
	last_statement = GetCurrentTimestamp();

	while (!ShutdownRequestPending)
	{
		long		timeout = DISCOVERY_INTERVAL_MS;
		TimestampTz now;
		bool		reloaded = false;
		long		lend_in;
		long		home_in;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			reloaded = true;
		}
		now = GetCurrentTimestamp();
		if (numasched_doorbell_answer())
		{
			if (dozing)
				numasched_lend_wake();
			last_statement = now;
		}
		dozing = false;
		/* every 100 ms, not at every lending tick */
		if (reloaded || now >= TimestampTzPlusMilliseconds(last_discovery, DISCOVERY_INTERVAL_MS))
		{
			if (numasched_enabled)
				place_lock_group_members();
			numasched_forget_gone(bgworkers_first, bgworkers_end);
			numasched_follow_companion();
			guarding = numasched_inversion_tick();
			last_discovery = now;
		}
		rebind_after_regroup(reloaded);

		if (numasched_enabled && numasched_rebalance_interval > 0)
		{
			/* from the interval in force now: a reload shortens the wait */
			next_pass = TimestampTzPlusMilliseconds(last_pass, numasched_rebalance_interval);
			if (now >= next_pass)
			{
				rebalance_pass();
				last_pass = now;
				next_pass = TimestampTzPlusMilliseconds(now, numasched_rebalance_interval);
			}
			timeout = Min(timeout, Max(1, (next_pass - now) / 1000));
		}
		lend_in = numasched_lend_tick();
		if (lend_in >= 0)
			timeout = Min(timeout, lend_in);
		home_in = numasched_homing_tick(&homing);
		if (home_in >= 0)
			timeout = Min(timeout, home_in);

		/*
		 * Nothing started for a second, nothing lent, nobody to guard or
		 * away from home: until the next pass, or a statement, whichever
		 * comes first.
		 */
		if (!guarding && !homing && numasched_lend_quiet() &&
			now >= TimestampTzPlusMilliseconds(last_statement, DOZE_AFTER_MS) &&
			numasched_doorbell_doze())
		{
			dozing = true;
			timeout = DOZE_MAX_MS;
			if (numasched_enabled && numasched_rebalance_interval > 0)
				timeout = Min(timeout, Max(1, (next_pass - now) / 1000));
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	/* exit status 1: the postmaster starts it again (unless it is shutting down) */
	proc_exit(1);
}
