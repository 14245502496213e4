/*
 * state.h - the shared state
 *
 * The plan in force (copied into shared memory so that every process reads
 * the same groups, whatever its own settings), the loads per group and node,
 * one slot per PGPROC (indexed by pgprocno, so a process finds its slot
 * without searching), the workload classes, the counters, and the lock with
 * the messages found while it was held.
 */
#ifndef NUMASCHED_BACKEND_STATE_H
#define NUMASCHED_BACKEND_STATE_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "backend/pg_compat.h"
#include "backend/settings.h"
#include "core/ns_policy.h"

typedef enum numasched_kind
{
	NUMASCHED_BACKEND = 1,
	NUMASCHED_PARALLEL_WORKER
} numasched_kind;

/*
 * A workload class: the values of numasched.nodes, numasched.cpu_groups and
 * numasched.spill its sessions were placed with, and what they mean in the
 * groups in force.  The scheduler cannot read another process's settings, so
 * the constraints live here, shared by the slots that name the class.  There
 * are as many entries as slots, so that no role's sessions can take every
 * entry and leave another's without its class.
 */
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
	/* decisions of what the kernel has for it, in order, and who made the last (binding.c) */
	uint32		cpus_seq;
	uint32		tier_seq;
	pid_t		cpus_decider;
	pid_t		tier_decider;
	/* tellings decided for it and not yet answered: it waits for them to leave */
	pg_atomic_uint32 in_flight;
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
	STAT_HOMECOMINGS,
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
	bool		nodes_shared;	/* and numasched.node_binding = preferred */
	TimestampTz settings_loaded_at; /* PgReloadTime of the process that built it */
	/* a pair of settings that does not fit the machine, not tried again */
	int			failed_groups_per_node; /* -1: none */
	uint32		generation;		/* bumped whenever the groups change */
	int			ngroups;
	/* capacities of the arrays that follow the struct */
	int			max_groups;
	int			nnodes;
	int			nslots;
	int			nclasses;
	int			classes_used;	/* entries with a slot in them */
	pg_atomic_uint64 stats[NUMASCHED_NSTATS];
	TimestampTz stats_reset;
	pg_atomic_uint64 last_pass; /* TimestampTz: end of the scheduler's last pass */
	pg_atomic_uint64 settling_until;	/* TimestampTz: a process settles (memory.c) */
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
/* How many are occupied now (unlocked: a hint). */
extern int	numasched_occupied_slots(void);

/* Attaches to the shared state; false when it was created just now. */
extern bool numasched_shmem_attach(void);

/* Sets or clears a slot's bit in the map of occupied slots; lock held. */
extern void numasched_mark_slot(const numasched_slot *slot, bool occupied_now);

/* Copies a plan into the shared one; lock held exclusively. */
extern void numasched_copy_plan_to_shared(const ns_plan *plan);

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

extern void numasched_count(numasched_stat stat, uint64 n);

/* ERROR unless loaded through shared_preload_libraries. */
extern void numasched_require_loaded(void);

/* Is numasched-scx in force (the scheduler follows it every 100 ms)? */
static inline bool
numasched_companion_in_force(void)
{
	return numasched_state != NULL && numasched_state->companion;
}

#endif							/* NUMASCHED_BACKEND_STATE_H */
