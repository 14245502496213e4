/*
 * numasched.h - the PostgreSQL side of numasched
 *
 * Shared state: the plan in force (copied into shared memory so that every
 * process reads the same groups, whatever its own settings), the loads per
 * group and node, one slot per PGPROC (indexed by pgprocno, so a process
 * finds its slot without searching) and the counters.
 */
#ifndef NUMASCHED_H
#define NUMASCHED_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "ns_os.h"
#include "pg_compat.h"
#include "settings.h"

typedef enum numasched_kind
{
	NUMASCHED_BACKEND = 1,
	NUMASCHED_PARALLEL_WORKER
} numasched_kind;

/*
 * A workload class: the values of numasched.nodes, numasched.cpu_groups and
 * numasched.spill its sessions were placed with, and what they mean in the
 * groups in force.  The scheduler cannot read another process's settings, so
 * the constraints live here, shared by the slots that name the class.
 */
#define NUMASCHED_MAX_CLASSES 64

typedef struct numasched_class
{
	int			refs;			/* slots in it; 0: free */
	bool		spill_never;
	char		nodes[NUMASCHED_NODES_LEN];
	char		cpu_groups[NUMASCHED_GROUPS_LEN];
	ns_cpuset	home;			/* the groups it is placed in */
	ns_cpuset	reach;			/* and those it may spill to */
} numasched_class;

typedef struct numasched_slot
{
	pid_t		pid;			/* 0: free */
	pid_t		leader_pid;		/* parallel workers: their leader */
	uint8		kind;			/* numasched_kind */
	bool		bound;			/* CPU affinity applied */
	bool		self_placed;	/* gives its slot back itself on exit */
	bool		keep_node;		/* a compact parallel worker: stays on its node */
	uint8		parallel_mode;	/* its numasched.parallel_placement, for its workers */
	int16		class_id;		/* its workload class; -1: none */
	int			node;			/* node index in the topology */
	int			group;			/* group of the shared plan; -1: none */
	uint32		weight;			/* counted load, NS_CPU_LOAD units */
	uint32		moves;
	uint32		moved_pass;		/* scheduler pass of its last move; 0: never */
	TimestampTz placed_at;
	ns_cpuset	cpus;			/* the CPUs of its group it was bound to */
	int16		lent_group;		/* a group lending it CPUs too; -1: none */
	int16		visit_group;	/* lent this group's CPUs for its statement; -1: none */
	bool		background;		/* background CPU priority: runs on every CPU in reach */
	bool		autogroup_pending;	/* its autogroup's nice is still to be set */
	bool		raised;			/* normal for now: it holds a lock normal work waits for */
	bool		aside;			/* runs on the CPUs set aside (inversion.c) */
	/* decisions of what the kernel has for it, in order (binding.c) */
	uint32		cpus_seq;
	uint32		tier_seq;
	ns_cpuset	told;			/* the CPUs last decided for it */
} numasched_slot;

/*
 * What a slot counts in its group's load: a background process fills no
 * group (it runs on what normal work leaves idle).
 */
static inline uint32
numasched_slot_load(const numasched_slot *slot)
{
	return slot->background ? 0 : slot->weight;
}

typedef enum numasched_stat
{
	STAT_PLACEMENTS,
	STAT_HOME,
	STAT_ONE_HOP,
	STAT_FARTHER,
	STAT_STEALS,
	STAT_MOVES,
	STAT_MOVES_SAME_NODE,
	STAT_MOVES_ONE_HOP,
	STAT_MOVES_FARTHER,
	STAT_BIND_FAILURES,
	STAT_PASSES,
	STAT_PAGES_MIGRATED,
	STAT_PAGES_COPIED,
	STAT_SCHEDULER_STARTS,
	STAT_LENDS,
	STAT_LEND_RETURNS,
	STAT_STATEMENT_LENDS,
	NUMASCHED_NSTATS
} numasched_stat;

#define NUMASCHED_DOORBELL_QUIET 0	/* no statement since the scheduler looked */
#define NUMASCHED_DOORBELL_RUNG 1	/* a statement started since */
#define NUMASCHED_DOORBELL_DOZING 2 /* the scheduler sleeps until rung */

typedef struct numasched_shared
{
	/*
	 * The scheduler's doorbell (doorbell.c), first and on a line of its own:
	 * every statement reads it.
	 */
	union
	{
		pg_atomic_uint32 state;
		char		pad[PG_CACHE_LINE_SIZE];
	}			doorbell;
	Latch	   *scheduler_latch;
	LWLock	   *lock;
	/* the settings the shared plan was built from */
	bool		configured;
	int			groups_per_node;
	bool		groups_share_node;	/* numasched.group_binding = preferred */
	TimestampTz settings_loaded_at; /* PgReloadTime of the process that built it */
	/* a pair of settings that does not fit the machine, not tried again */
	int			failed_groups_per_node; /* -1: none */
	uint32		generation;		/* bumped whenever the groups change */
	int			ngroups;
	/* capacities of the arrays that follow the struct */
	int			max_groups;
	int			nnodes;
	int			nslots;
	pg_atomic_uint64 stats[NUMASCHED_NSTATS];
	TimestampTz stats_reset;
	pg_atomic_uint64 last_pass; /* TimestampTz: end of the scheduler's last pass */
	uint32		pass;			/* rebalancing passes since server start */

	/*
	 * CPUs set aside for background lock holders that cannot be raised
	 * (inversion.c): they run there, and every other placed process is
	 * kept off them.
	 */
	ns_cpuset	set_aside;
	bool		set_aside_changed;	/* a holder left: to be worked out again */

	/*
	 * numasched-scx is the kernel's sched_ext scheduler (companion.c): placed
	 * processes run under it, each with the CPUs of its whole reach.
	 */
	bool		companion;
} numasched_shared;

/* shared state (state.c) */
extern numasched_shared *numasched_state;
extern numasched_slot *numasched_slots;
extern numasched_class *numasched_classes;

/*
 * Per group of the shared plan: the group lending it its idle CPUs now, or
 * -1 (lending.c writes it, placement reads it; lock held).
 */
extern int16 *numasched_group_lender;

/*
 * Per group of the shared plan (statement_lending.c), each on a cache line
 * of its own: the statements running in it, and its own statements lent
 * another group's CPUs.
 */
typedef union numasched_group_running
{
	struct
	{
		pg_atomic_uint32 statements;
		pg_atomic_uint32 away;
	};
	char		pad[PG_CACHE_LINE_SIZE];
} numasched_group_running;
extern numasched_group_running *numasched_running;

extern Size numasched_shmem_size(void);

/*
 * The first occupied slot at or after i, -1 if none.  Without the lock the
 * answer may be stale: check the slot again under it.
 */
extern int	numasched_next_slot(int i);
extern int	numasched_slot_count(void);

/* Attaches to the shared state; false when it was created just now. */
extern bool numasched_shmem_attach(void);

/* Sets or clears a slot's bit in the map of occupied slots; lock held. */
extern void numasched_mark_slot(const numasched_slot *slot, bool occupied_now);

/* Copies a plan into the shared one; lock held exclusively. */
extern void numasched_copy_plan_to_shared(const ns_plan *plan);

/* The groups a slot's class may spill to; NULL: any. */
extern const ns_cpuset *numasched_slot_reach(const numasched_slot *slot);

/*
 * The groups of a slot's class, where the rebalancer may move it (it spills
 * only when placed); NULL: any.  Lock held.
 */
extern const ns_cpuset *numasched_slot_home(const numasched_slot *slot);

/*
 * The CPUs a slot's process gets in a group of the shared plan, nothing
 * lent: the group's (with numasched.group_binding = preferred, its node's
 * groups of its class), or at background priority every group in its
 * class's reach from there; lock held.
 */
extern void numasched_group_cpus_for(const numasched_slot *slot, int group, ns_cpuset *cpus);

/*
 * The CPUs the kernel was last told for a slot: its group's, and those of
 * a group lending it CPUs, or, at background priority, every group in its
 * class's reach; less the CPUs set aside, or only those where it is a lock
 * holder they are set aside for; lock held.
 */
extern void numasched_slot_kernel_cpus(const numasched_slot *slot, ns_cpuset *cpus);

/*
 * "cpus" of a process that runs on the CPUs set aside ("aside"): those of
 * them in "cpus"; of any other: "cpus" less them; either unless that leaves
 * none.  Lock held.
 */
extern void numasched_keep_off_set_aside(bool aside, ns_cpuset *cpus);

/*
 * What the kernel is told for a slot's process (binding.c): decided with the
 * lock held, by whoever writes the slot, and told by numasched_release once
 * it is released, in the order decided; the last decision is the one the
 * kernel keeps.  A refusal is counted and the books put back: a move or a
 * visit taken back, else the process marked unbound.
 */

/* Its CPUs; false when its process is gone. */
extern bool numasched_bind_slot_locked(numasched_slot *slot, const ns_cpuset *cpus);
/* The same, with the telling's number (numasched_told), -1 if it is gone. */
extern int	numasched_bind_locked(numasched_slot *slot, const ns_cpuset *cpus);

/*
 * Moved to "group" in the books and bound to "cpus"; taken back if the
 * kernel refuses.  Returns the telling's number (numasched_told), -1 if its
 * process is gone.
 */
extern int	numasched_bind_move_locked(numasched_slot *slot, int group, const ns_cpuset *cpus);

/* Lent "group"'s CPUs for its statement (moved there at once); ends if refused. */
extern int	numasched_bind_visit_locked(numasched_slot *slot, int group);

/*
 * Its tier as the slot says now (background and not raised; under the
 * companion or not); refused, the books go back to "was_background" and
 * "was_raised".
 */
extern int	numasched_retier_slot_locked(numasched_slot *slot, bool was_background, bool was_raised);

/* Tells the kernel what was decided: numasched_release does, lock released. */
extern void numasched_tell_kernel(void);

/* After numasched_release: whether telling "i" was taken, and if not why. */
extern bool numasched_told(int i, const char **err);

/* The number the next decision gets, and how many since "mark" were refused. */
extern int	numasched_tellings_mark(void);
extern int	numasched_refusals_since(int mark, const char **err);

/*
 * A message to send once the lock is released (numasched_release): a
 * message can block on a client's full socket, so none is sent while the
 * lock is held.
 */
extern void numasched_report_later(int elevel, const char *fmt,...) pg_attribute_printf(2, 3);

/* Where numasched reports: never with its lock held (checked in assert-enabled builds). */
static inline void
numasched_assert_unlocked(void)
{
	Assert(numasched_state == NULL || !LWLockHeldByMe(numasched_state->lock));
}

/* The shared plan and loads; call with the lock held. */
extern const ns_plan *numasched_shared_plan(void);
/* Whether the plan in force has groups to lend between (read without the lock). */
extern bool numasched_groups_to_lend_between(void);
extern ns_loads *numasched_shared_loads(void);

/* Releases the lock, then sends any WARNING found while it was held. */
extern void numasched_release(void);

/* workload classes (classes.c); lock held exclusively */

/* The class of this process's own settings, one more slot in it; -1: none. */
extern int	numasched_take_own_class_locked(void);
extern void numasched_drop_class_locked(int class_id);

/* What a class's settings mean in the groups in force. */
extern void numasched_compute_class_locked(numasched_class *class);


/* the plan in force (regroup.c) */

/*
 * Makes the shared plan match this process's settings unless they are older
 * than the plan's; lock held exclusively.  Release the lock with
 * numasched_release(), which sends any WARNING found meanwhile.
 */
extern bool numasched_sync_plan(void);

/* the parallel workers of a background session's plans (parallel_cap.c) */

/*
 * The most parallel workers a Gather of this process's next plan may have:
 * the CPUs of its reach but one, when it runs at background priority; -1: no
 * cap.
 */
extern int	numasched_background_workers_cap(void);

/*
 * This process runs at background priority now, or not (its priority
 * changed, or it left numasched): its plans are capped, or not, and those it
 * cached are made again.
 */
extern void numasched_background_changed(bool background);

/* Whether this process's plans are capped: a test the planner hook makes first. */
extern bool numasched_plans_capped;

/* placement (placement.c) */

/* Gives a slot back: its load, its class; lock held exclusively. */
extern void numasched_forget_slot_locked(numasched_slot *slot);

/* Places "proc" (MyProc, or another process); false when nothing was done. */
extern bool numasched_place(PGPROC *proc, numasched_kind kind, PGPROC *leader);

/*
 * Moves this process into the workload class of its settings now, or places
 * it (a backend whose placement waited for its per-role settings), or lets
 * it go (numasched.enabled turned off).
 */
extern void numasched_reclass(void);

/* memory (memory.c) */

/*
 * Tries the kernel's memory calls once, in the postmaster at load time, and
 * says at LOG which it refused and what policy the postmaster inherited.
 * With one usable memory node, it makes none.
 */
extern void numasched_probe_memory(void);

/* Whether every call of "calls" (NS_CALL_* bits) is worth making here. */
extern bool numasched_memory_call_usable(int calls);

/* The postmaster's policy when it was not the default and may be used; else NULL. */
extern const ns_saved_policy *numasched_inherited_policy(void);

/* "used", "not needed: one memory node" or "refused: ...", for numasched_stats */
extern const char *numasched_memory_calls_state(void);

typedef enum numasched_failure
{
	FAILURE_AFFINITY,
	FAILURE_UNBIND,
	FAILURE_MEMORY_POLICY,
	FAILURE_SETTLE,
	FAILURE_PRIORITY,
	FAILURE_EXECUTOR
} numasched_failure;

/* A WARNING once per process and kind of failure (bind_failures is counted where it failed). */
extern void numasched_warn_failure(numasched_failure kind, const char *err, const char *fmt,...) pg_attribute_printf(3, 4);

/*
 * This process was placed on a node (its memory policy; a parallel worker
 * also moves its pages), or let go (the kernel's default policy back).
 */
extern void numasched_memory_placed(int node_index, numasched_kind kind, bool bound);
extern void numasched_memory_unplaced(void);

/*
 * At a statement's start: adopts the memory policy of the node the slot now
 * names (after a move), and brings the process's memory there once it has
 * lived long enough for that to pay.
 */
extern void numasched_follow_slot(void);

/*
 * Forgets the slots in [first, end) of processes placed from outside that
 * are gone.
 */
extern void numasched_forget_gone(int first, int end);

typedef enum numasched_move_result
{
	MOVE_DONE,
	MOVE_NOT_PLACED,			/* numasched did not place that process */
	MOVE_BAD_NODE,				/* the node has no CPU group (any more) */
	MOVE_BAD_GROUP,				/* the group is not on that node */
	MOVE_BIND_FAILED,			/* the kernel refused (a WARNING says why) */
	MOVE_OUTSIDE_CLASS			/* not a group its workload class may use */
} numasched_move_result;

/*
 * Moves a placed process to a node, into *group or (if it is -1) the node's
 * least-loaded group, checking both against the plan in force under the
 * lock; "within_class": only into a group its workload class may use.  On
 * MOVE_BAD_GROUP, *group is the node's first group.
 */
extern numasched_move_result numasched_move_process(PGPROC *proc, pid_t pid, int node_index,
													int *group, bool within_class);

/*
 * Moves a slot to another group in the books (loads, counters, cooldown);
 * lock held exclusively.  The caller binds the process after releasing it.
 */
extern void numasched_move_slot_locked(numasched_slot *slot, int group);

/*
 * The group lending its CPUs to "group" now, if a process that may reach
 * the groups "reach" (NULL: all) may use them; else -1.  Lock held.
 */
extern int	numasched_lender_for_locked(int group, const ns_cpuset *reach);

/* CPU priority (priority.c) */

/*
 * Gives process "pid" (0: this one) background priority or normal back;
 * *autogroup_pending when its autogroup's nice could not be set yet (the
 * kernel's rate limit), for the scheduler to try again.
 */
extern bool numasched_set_priority(pid_t pid, bool background, bool *autogroup_pending,
								   char *err, size_t errlen);

/* 1: the kernel runs process "pid" at background priority, 0: not, -1: gone. */
extern int	numasched_is_background(pid_t pid);

/* the sched_ext companion (companion.c) */

/* Is numasched-scx in force (the scheduler follows it every 100 ms)? */
static inline bool
numasched_companion_in_force(void)
{
	return numasched_state != NULL && numasched_state->companion;
}

/* The companion loaded or unloaded since the last look: every placed process follows. */
extern void numasched_follow_companion(void);

/* per slot, what its process ran and waited, in ns (schedstat.c) */
extern void numasched_schedstat_init(void);
extern bool numasched_read_schedstat(int slot, pid_t pid, uint64 *ran_ns, uint64 *waited_ns);
/* Closes the files of processes that left their slots. */
extern void numasched_schedstat_forget_gone(void);

/* lending idle CPUs to groups whose work waits (lending.c), the scheduler's */
extern void numasched_lend_start(void);
/* Gives back everything lent. */
extern void numasched_end_lending(void);
/* A tick when one is due; the ms until the next, or -1: no lending now. */
extern long numasched_lend_tick(void);
/* Nothing lent, no wait of ours in the last second, no read going on. */
extern bool numasched_lend_quiet(void);
/* A statement woke the dozing scheduler: read at once, and at every tick for a while. */
extern void numasched_lend_wake(void);

/*
 * A statement that would wait a whole statement for a CPU of its group is
 * lent the CPUs of the nearest group where it would not, until its end
 * (statement_lending.c); "statement" is what tells its end: its QueryDesc
 * or its PlannedStmt.
 */
extern void numasched_statement_start(const void *statement);
extern void numasched_statement_end(const void *statement);
/* whether statements are counted under the plan statement_lending.c last looked at (settings.h) */
extern bool numasched_lend_plan_lends;

/*
 * Whether a statement may be counted: a new plan (or settings) to look at,
 * or one under which statements are counted (on one node with the defaults
 * a statement costs these two loads).
 */
static inline bool
numasched_may_count_statements(void)
{
	return numasched_lend_plan_lends || numasched_state->generation != numasched_lend_plan_generation;
}

extern void numasched_count(numasched_stat stat, uint64 n);

/*
 * Memory of process "pid" per node id (kB), from its numa_maps: all of it,
 * and its private memory (either may be NULL).
 */
extern bool numasched_process_memory(pid_t pid, uint64 *kb_per_node, uint64 *private_kb_per_node);

/* the main shared memory segment (segment.c) */

/*
 * The main shared memory segment: found as the mapping that holds our own
 * ShmemInitStruct, checked by its header's magic number; with "pmd_mapped",
 * how much of it this process maps as transparent huge pages.
 */
extern bool numasched_main_segment(char **start, Size *length, Size *page_size, Size *pmd_mapped);

/* The nodes shared memory is interleaved over (node ids). */
extern void numasched_interleave_nodes(ns_cpuset *nodes);

/*
 * The postmaster interleaves what it allocates until the main segment is
 * initialised (shmem_request_hook: before the segment is created), so that
 * the pages it initialises land where the segment's interleave policy puts
 * them.
 */
extern void numasched_interleave_initialisation(void);

/*
 * Then (shmem_startup_hook) it allocates as before, the segment gets its
 * interleave policy, and any resident page elsewhere is moved to its
 * interleave node; before a crash restart's new segment the first step is
 * taken again.
 */
extern void numasched_interleave_shared_memory(void);

/*
 * Otherwise the segment keeps the policy the postmaster inherited, or, of
 * huge pages, gets the local one, so that no process's own policy can make a
 * fault find an empty node pool (SIGBUS).
 */
extern void numasched_guard_segment(void);

/* ERROR unless loaded through shared_preload_libraries. */
extern void numasched_require_loaded(void);

/*
 * Background lock holders raised while normal processes wait for them, and
 * autogroup nice values tried again (inversion.c), every 100 ms.
 */
extern void numasched_inversion_start(void);
/* False while no process is at background priority or waits for its autogroup change: nothing to do. */
extern bool numasched_inversion_tick(void);

/*
 * Sets blocks_normal[slot] for each background placed process that holds a
 * heavyweight lock a normal placed process waits for, directly or along a
 * chain of waits (lock_waits.c); returns how many it set.  One look at the
 * lock table, in the caller's memory context.
 */
extern int	numasched_mark_background_blockers(bool *blocks_normal);

/* the scheduler's doorbell (doorbell.c) */

/* The scheduler's: its latch is the doorbell's, no statement seen yet. */
extern void numasched_doorbell_start(void);
/* Whether a statement started since the last answer. */
extern bool numasched_doorbell_answer(void);
/* Dozes unless a statement started since the last answer: true if so. */
extern bool numasched_doorbell_doze(void);
extern void numasched_wake_scheduler(void);

/*
 * At every statement's start: the first to find the scheduler dozing wakes
 * it.  One read when the bell was rung already this tick.
 */
static inline void
numasched_ring_scheduler(void)
{
	pg_atomic_uint32 *bell = &numasched_state->doorbell.state;

	if (pg_atomic_read_u32(bell) != NUMASCHED_DOORBELL_RUNG &&
		pg_atomic_exchange_u32(bell, NUMASCHED_DOORBELL_RUNG) == NUMASCHED_DOORBELL_DOZING)
		numasched_wake_scheduler();
}

/* The scheduler worker's entry point (scheduler.c). */
extern PGDLLEXPORT void numasched_scheduler_main(Datum arg);

#endif							/* NUMASCHED_H */
