/*
 * state.c - numasched's shared memory: its layout (the plan in force, the
 * loads, one slot per PGPROC, the classes, the counters), attaching to it,
 * the lock and the WARNINGs found while it was held
 */
#include "postgres.h"

#include "access/twophase.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"

#include "backend/state.h"

numasched_shared *numasched_state = NULL;
numasched_slot *numasched_slots = NULL;
numasched_class *numasched_classes = NULL;
int16	   *numasched_group_lender = NULL;
numasched_group_running *numasched_running = NULL;

/*
 * One bit per slot, set while it is occupied: the scheduler's passes visit
 * the occupied slots only, not every PGPROC's (10,000 with max_connections =
 * 10000, most of them free on most servers).  Written under the lock.
 */
static uint64 *occupied = NULL;

/* this process's view of the shared arrays */
static ns_plan shared_plan;
static ns_loads shared_loads;

int
numasched_slot_count(void)
{
	/* one per PGPROC, as InitProcGlobal counts them */
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

static int
max_groups(void)
{
	/* a group has at least one CPU */
	return numasched_machine ? ns_cpuset_count(&numasched_machine->usable) : 0;
}

static int
node_count(void)
{
	return numasched_machine ? numasched_machine->nnodes : 0;
}

/* Lays out the shared arrays; with base NULL only counts the size. */
static Size
layout(char *base)
{
	int			ng = max_groups();
	int			nn = node_count();
	Size		size = MAXALIGN(sizeof(numasched_shared));

#define PLACE(field, type, count) \
	do { \
		if (base) field = (type *) (base + size); \
		size = add_size(size, MAXALIGN(mul_size(sizeof(type), (count)))); \
	} while (0)

	PLACE(shared_plan.groups, ns_group, ng);
	PLACE(shared_plan.node_first_group, int, nn);
	PLACE(shared_plan.node_ngroups, int, nn);
	PLACE(shared_plan.node_ncpus, int, nn);
	PLACE(shared_plan.node_nsteal, int, nn);
	PLACE(shared_plan.steal, int, nn * nn);
	PLACE(shared_plan.hops, uint8_t, nn * nn);
	PLACE(shared_loads.group, uint32_t, ng);
	PLACE(shared_loads.node, uint64_t, nn);
	PLACE(shared_loads.node_room, int, nn);
	PLACE(numasched_group_lender, int16, ng);
	PLACE(numasched_running, numasched_group_running, ng);
	PLACE(numasched_slots, numasched_slot, numasched_slot_count());
	PLACE(occupied, uint64, numasched_slot_count() / 64 + 1);
	/* a class has a slot at least: the table never fills */
	PLACE(numasched_classes, numasched_class, numasched_slot_count());
#undef PLACE
	return size;
}

Size
numasched_shmem_size(void)
{
	return layout(NULL);
}

void
numasched_copy_plan_to_shared(const ns_plan *plan)
{
	int			nn = node_count();

	memcpy(shared_plan.groups, plan->groups, plan->ngroups * sizeof(ns_group));
	memcpy(shared_plan.node_first_group, plan->node_first_group, nn * sizeof(int));
	memcpy(shared_plan.node_ngroups, plan->node_ngroups, nn * sizeof(int));
	memcpy(shared_plan.node_ncpus, plan->node_ncpus, nn * sizeof(int));
	memcpy(shared_plan.node_nsteal, plan->node_nsteal, nn * sizeof(int));
	memcpy(shared_plan.steal, plan->steal, nn * nn * sizeof(int));
	memcpy(shared_plan.hops, plan->hops, nn * nn);
	numasched_state->ngroups = plan->ngroups;
	numasched_state->groups_share_node = plan->groups_share_node;
	numasched_state->nodes_shared = plan->nodes_shared;
	/* new groups: nothing lent between them yet */
	for (int g = 0; g < plan->ngroups; g++)
		numasched_group_lender[g] = -1;
}

/*
 * Two groups at least, and where the groups of a node share its CPUs
 * (numasched.group_binding = preferred), on two nodes: groups are in node
 * order; none where the nodes share theirs too (numasched.node_binding =
 * preferred): every process may run on every CPU in its reach already.
 * Read without the lock: the next tick sees a regroup.
 */
bool
numasched_groups_to_lend_between(void)
{
	const ns_plan *plan = numasched_shared_plan();

	if (plan->ngroups < 2 || (plan->groups_share_node && plan->nodes_shared))
		return false;
	return !plan->groups_share_node || plan->groups[0].node != plan->groups[plan->ngroups - 1].node;
}

const ns_plan *
numasched_shared_plan(void)
{
	shared_plan.ngroups = numasched_state->ngroups;
	shared_plan.groups_share_node = numasched_state->groups_share_node;
	shared_plan.nodes_shared = numasched_state->nodes_shared;
	return &shared_plan;
}

ns_loads *
numasched_shared_loads(void)
{
	return &shared_loads;
}

bool
numasched_shmem_attach(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	numasched_state = ShmemInitStruct("numasched", numasched_shmem_size(), &found);
	layout((char *) numasched_state);
	shared_plan.topo = numasched_machine;
	if (!found)
	{
		memset(numasched_state, 0, numasched_shmem_size());
		numasched_state->lock = &(GetNamedLWLockTranche("numasched"))->lock;
		numasched_state->max_groups = max_groups();
		numasched_state->nnodes = node_count();
		numasched_state->nslots = numasched_slot_count();
		numasched_state->nclasses = numasched_slot_count();
		for (int i = 0; i < NUMASCHED_NSTATS; i++)
			pg_atomic_init_u64(&numasched_state->stats[i], 0);
		pg_atomic_init_u64(&numasched_state->last_pass, 0);
		pg_atomic_init_u64(&numasched_state->settling_until, 0);
		numasched_state->stats_reset = GetCurrentTimestamp();
		numasched_state->companion = ns_companion_loaded("/sys");
		for (int i = 0; i < numasched_state->nslots; i++)
		{
			numasched_slots[i].group = -1;
			numasched_slots[i].class_id = -1;
			numasched_slots[i].lent_group = -1;
			numasched_slots[i].visit_group = -1;
			numasched_slots[i].aside = false;
			pg_atomic_init_u32(&numasched_slots[i].in_flight, 0);
		}
		for (int g = 0; g < numasched_state->max_groups; g++)
		{
			numasched_group_lender[g] = -1;
			pg_atomic_init_u32(&numasched_running[g].statements, 0);
			pg_atomic_init_u32(&numasched_running[g].away, 0);
		}
		numasched_state->failed_groups_per_node = -1;
	}
	LWLockRelease(AddinShmemInitLock);
	return found;
}

void
numasched_require_loaded(void)
{
	if (numasched_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("numasched must be loaded via \"shared_preload_libraries\""),
				 errhint("Add numasched to shared_preload_libraries in postgresql.conf and restart the server.")));
}

void
numasched_count(numasched_stat stat, uint64 n)
{
	pg_atomic_fetch_add_u64(&numasched_state->stats[stat], n);
}

void
numasched_mark_slot(const numasched_slot *slot, bool occupied_now)
{
	int			i = slot - numasched_slots;

	if (occupied_now)
		occupied[i / 64] |= UINT64CONST(1) << (i % 64);
	else
		occupied[i / 64] &= ~(UINT64CONST(1) << (i % 64));
}

int
numasched_occupied_slots(void)
{
	int			n = 0;

	for (int w = 0; w <= numasched_state->nslots / 64; w++)
		n += pg_popcount64(occupied[w]);
	return n;
}

int
numasched_next_slot(int i)
{
	int			nslots = numasched_state->nslots;

	while (i < nslots)
	{
		uint64		word = occupied[i / 64] & (~UINT64CONST(0) << (i % 64));

		if (word != 0)
		{
			i = i / 64 * 64 + pg_rightmost_one_pos64(word);
			return i < nslots ? i : -1;
		}
		i = (i / 64 + 1) * 64;
	}
	return -1;
}

