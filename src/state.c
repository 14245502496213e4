/*
 * state.c - numasched's shared state and the placement of processes
 *
 * The plan in force lives in shared memory.  A process whose settings differ
 * from it and are at least as new (PgReloadTime: a new backend after a reload
 * is forked with the postmaster's fresh settings) rebuilds it and re-counts
 * the placed processes into the new groups; everybody else just reads it.  So
 * an exiting process or a view never needs settings of its own, and a process
 * that has not yet seen a reload never turns the groups back.
 *
 * The books and the kernel agree: a process's CPUs are set while the lock is
 * held, by whoever writes its group, and the group is written only when the
 * kernel took the CPUs.
 *
 * Nothing here raises an ERROR while placing: numasched must never turn a
 * working connection into a failing one.  A process that cannot be bound runs
 * unbound, with a WARNING once per process and a counter.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/parallel.h"
#include "access/twophase.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/pg_shmem.h"
#include "storage/procarray.h"
#include "storage/shmem.h"

#include "numasched.h"
#include "ns_numa_maps.h"

numasched_shared *numasched_state = NULL;
numasched_slot *numasched_slots = NULL;
numasched_class *numasched_classes = NULL;

/*
 * One bit per slot, set while it is occupied: the scheduler's passes visit
 * the occupied slots only, not every PGPROC's (10,000 with max_connections =
 * 10000, most of them free on most servers).  Written under the lock.
 */
static uint64 *occupied = NULL;

/* this process's view of the shared arrays */
static ns_plan shared_plan;
static ns_loads shared_loads;

/*
 * A WARNING found while the lock was held, sent once it is released: a
 * message can block on a client's full socket.
 */
static char pending_warning[NS_ERRLEN + 256];

static void
send_pending_warning(void)
{
	if (pending_warning[0])
	{
		char		text[sizeof(pending_warning)];

		strlcpy(text, pending_warning, sizeof(text));
		pending_warning[0] = '\0';
		ereport(WARNING, (errmsg_internal("%s", text)));
	}
}

/* this process's own placement */
static bool exit_callback_registered = false;
static bool bind_warning_given = false;
static int	applied_memory_node = -1;	/* the node of the last adoption */
static int	applied_memory_setting = -1;	/* numasched.memory_policy then */
static int	kernel_memory_policy = NS_MEMORY_NONE;	/* what the kernel has */
static int	settled_node = -1;	/* the node its memory was last brought to */

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
	PLACE(numasched_slots, numasched_slot, numasched_slot_count());
	PLACE(occupied, uint64, numasched_slot_count() / 64 + 1);
	PLACE(numasched_classes, numasched_class, NUMASCHED_MAX_CLASSES);
#undef PLACE
	return size;
}

Size
numasched_shmem_size(void)
{
	return layout(NULL);
}

static void
copy_plan_to_shared(const ns_plan *plan)
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
}

const ns_plan *
numasched_shared_plan(void)
{
	shared_plan.ngroups = numasched_state->ngroups;
	return &shared_plan;
}

ns_loads *
numasched_shared_loads(void)
{
	return &shared_loads;
}

void
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
		for (int i = 0; i < NUMASCHED_NSTATS; i++)
			pg_atomic_init_u64(&numasched_state->stats[i], 0);
		pg_atomic_init_u64(&numasched_state->last_pass, 0);
		numasched_state->stats_reset = GetCurrentTimestamp();
		for (int i = 0; i < numasched_state->nslots; i++)
		{
			numasched_slots[i].group = -1;
			numasched_slots[i].class_id = -1;
		}
		numasched_state->failed_groups_per_node = -1;
		/* the plan of the settings at server start */
		numasched_sync_plan();
	}
	LWLockRelease(AddinShmemInitLock);
	send_pending_warning();
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
numasched_release(void)
{
	LWLockRelease(numasched_state->lock);
	send_pending_warning();
}

void
numasched_count(numasched_stat stat, uint64 n)
{
	pg_atomic_fetch_add_u64(&numasched_state->stats[stat], n);
}

/* The groups of the plan on these nodes (node ids; NULL: every node). */
static void
groups_on_nodes(const ns_plan *plan, const ns_cpuset *nodes, ns_cpuset *groups)
{
	ns_cpuset_zero(groups);
	for (int g = 0; g < plan->ngroups; g++)
		if (nodes == NULL || ns_cpuset_test(nodes, numasched_machine->nodes[plan->groups[g].node].id))
			ns_cpuset_set(groups, g);
}

/*
 * What a class's settings mean in the groups in force; lock held.  Values
 * checked when they were set may no longer fit after a regroup: then the
 * class uses every group of its nodes (or of all nodes), with one WARNING,
 * rather than failing anybody's connection.
 */
static void
compute_class_locked(numasched_class *class)
{
	const ns_plan *plan = numasched_shared_plan();
	ns_cpuset	nodes,
				on_nodes,
				wanted;
	char		err[NS_ERRLEN];
	bool		fits = true;
	int			g;

	if (class->nodes[0] &&
		ns_cpuset_parse(class->nodes, strlen(class->nodes), NS_MAX_NODES, &nodes, err, sizeof(err)))
		groups_on_nodes(plan, &nodes, &on_nodes);
	else
		groups_on_nodes(plan, NULL, &on_nodes);
	if (ns_cpuset_count(&on_nodes) == 0)
	{
		snprintf(pending_warning, sizeof(pending_warning),
				 "numasched.nodes = '%s' has no CPU group now, its sessions may use every group",
				 class->nodes);
		groups_on_nodes(plan, NULL, &on_nodes);
	}
	class->home = on_nodes;
	if (class->cpu_groups[0])
	{
		ns_cpuset_zero(&class->home);
		if (!ns_cpuset_parse(class->cpu_groups, strlen(class->cpu_groups), NS_MAX_CPUS, &wanted,
							 err, sizeof(err)))
			ns_cpuset_zero(&wanted);
		NS_CPUSET_FOREACH(g, &wanted)
		{
			if (g >= plan->ngroups)
				fits = false;
			else if (ns_cpuset_test(&on_nodes, g))
				ns_cpuset_set(&class->home, g);
		}
		if (!fits || ns_cpuset_count(&class->home) == 0)
		{
			snprintf(pending_warning, sizeof(pending_warning),
					 "numasched.cpu_groups = '%s' does not fit the CPU groups in force (0 to %d) on numasched.nodes = '%s', its sessions use every group of those nodes",
					 class->cpu_groups, plan->ngroups - 1, class->nodes);
			class->home = on_nodes;
		}
	}
	class->reach = class->spill_never ? class->home : on_nodes;
}

/*
 * The class of these settings, with one more slot in it; lock held.  -1 for
 * the default class (every group: no constraint to keep), or when the table
 * is full.
 */
static int
take_class_locked(const char *nodes, const char *cpu_groups, bool spill_never)
{
	int			free_id = -1;
	numasched_class *class;

	if (nodes[0] == '\0' && cpu_groups[0] == '\0')
		return -1;
	for (int i = 0; i < NUMASCHED_MAX_CLASSES; i++)
	{
		class = &numasched_classes[i];
		if (class->refs == 0)
		{
			if (free_id < 0)
				free_id = i;
		}
		else if (class->spill_never == spill_never && strcmp(class->nodes, nodes) == 0 &&
				 strcmp(class->cpu_groups, cpu_groups) == 0)
		{
			class->refs++;
			return i;
		}
	}
	if (free_id < 0)
	{
		snprintf(pending_warning, sizeof(pending_warning),
				 "numasched has no room for another workload class (%d are in use), process %d is placed without one",
				 NUMASCHED_MAX_CLASSES, (int) MyProcPid);
		return -1;
	}
	class = &numasched_classes[free_id];
	class->refs = 1;
	class->spill_never = spill_never;
	strlcpy(class->nodes, nodes, sizeof(class->nodes));
	strlcpy(class->cpu_groups, cpu_groups, sizeof(class->cpu_groups));
	compute_class_locked(class);
	return free_id;
}

/*
 * A list as one text per set ("1,0" and "0-1" are one class); a list that
 * does not parse (its check hook refused it) as it is.
 */
static void
canonical_list(const char *text, int limit, char *out, size_t outlen)
{
	ns_cpuset	set;
	char		err[NS_ERRLEN];

	if (text == NULL || text[0] == '\0' || !ns_cpuset_parse(text, strlen(text), limit, &set, err, sizeof(err)) ||
		ns_cpuset_format(&set, out, outlen) >= outlen)
		strlcpy(out, text ? text : "", outlen);
}

/* The class of this process's own settings; lock held. */
static int
take_own_class_locked(void)
{
	char		nodes[NUMASCHED_NODES_LEN];
	char		groups[NUMASCHED_GROUPS_LEN];

	canonical_list(numasched_nodes, NS_MAX_NODES, nodes, sizeof(nodes));
	canonical_list(numasched_cpu_groups, NS_MAX_CPUS, groups, sizeof(groups));
	return take_class_locked(nodes, groups, numasched_spill == SPILL_NEVER);
}

static void
drop_class_locked(int class_id)
{
	if (class_id >= 0)
		numasched_classes[class_id].refs--;
}

static const ns_cpuset *
slot_reach(const numasched_slot *slot)
{
	return slot->class_id >= 0 ? &numasched_classes[slot->class_id].reach : NULL;
}

const ns_cpuset *
numasched_slot_home(const numasched_slot *slot)
{
	return slot->class_id >= 0 ? &numasched_classes[slot->class_id].home : NULL;
}

static void
forget_slot_locked(numasched_slot *slot)
{
	if (slot->group >= 0 && slot->group < numasched_state->ngroups)
		ns_loads_add(numasched_shared_plan(), &shared_loads, slot->group, -(int64) slot->weight);
	drop_class_locked(slot->class_id);
	slot->class_id = -1;
	slot->pid = 0;
	slot->group = -1;
	occupied[(slot - numasched_slots) / 64] &= ~(UINT64CONST(1) << ((slot - numasched_slots) % 64));
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

bool
numasched_sync_plan(void)
{
	int			groups_per_node = numasched_groups_per_node;
	ns_plan    *plan;
	const ns_plan *shared;
	ns_settings settings;
	char		err[NS_ERRLEN];

	if (numasched_machine == NULL)
		return false;
	if (numasched_state->configured &&
		(numasched_state->groups_per_node == groups_per_node ||
	/* settings older than the plan's: this process has not seen a reload */
		 PgReloadTime < numasched_state->settings_loaded_at ||
	/* a value already found not to fit: the plan in force stays */
		 numasched_state->failed_groups_per_node == groups_per_node))
		return true;

	/*
	 * The groups cover every node with usable CPUs: numasched.nodes limits
	 * sessions (their class), not the groups, so group ids stay what they
	 * are whatever a role's nodes.  The check hook refuses a value some node
	 * cannot be split into; the CPUs usable may still differ (a process
	 * started under another cpuset), so a plan that cannot be built leaves
	 * the groups as they are, or at server start makes one group per
	 * last-level cache.
	 */
	plan = ns_plan_build(numasched_machine, groups_per_node, NULL, err, sizeof(err));
	if (plan == NULL)
	{
		snprintf(pending_warning, sizeof(pending_warning),
				 "numasched cannot use numasched.groups_per_node = %d, %s: %s",
				 groups_per_node,
				 numasched_state->configured ? "the CPU groups stay as they are" :
				 "using one group per last-level cache", err);
		numasched_state->failed_groups_per_node = groups_per_node;
		if (numasched_state->configured)
			return true;
		groups_per_node = 0;
		if ((plan = ns_plan_build(numasched_machine, groups_per_node, NULL, err, sizeof(err))) == NULL)
			return false;
	}
	else
		numasched_state->failed_groups_per_node = -1;
	copy_plan_to_shared(plan);
	ns_plan_free(plan);

	/*
	 * What the classes mean in the new groups; then re-count what is placed,
	 * by the CPUs it has.  A process whose group is not its class's any more
	 * is placed again in its class (the scheduler binds it, and it brings its
	 * memory along at its next statement).
	 */
	shared = numasched_shared_plan();
	for (int c = 0; c < NUMASCHED_MAX_CLASSES; c++)
		if (numasched_classes[c].refs > 0)
			compute_class_locked(&numasched_classes[c]);
	numasched_settings(&settings);
	ns_loads_reset(shared, &shared_loads);
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		const ns_cpuset *reach = slot_reach(slot);

		slot->group = ns_group_of_cpu(shared, ns_cpuset_next(&slot->cpus, 0));
		if (slot->group < 0 || (reach && !ns_cpuset_test(reach, slot->group)))
		{
			ns_request	request = {slot->kind == NUMASCHED_PARALLEL_WORKER, -1, -1, -1, 0,
			numasched_slot_home(slot), reach};
			ns_placement where;

			ns_place(shared, &shared_loads, &settings, &request, &where);
			slot->group = where.group;
		}
		slot->node = shared->groups[slot->group].node;
		ns_loads_add(shared, &shared_loads, slot->group, slot->weight);
	}
	numasched_state->configured = true;
	numasched_state->groups_per_node = groups_per_node;
	numasched_state->settings_loaded_at = PgReloadTime;
	numasched_state->generation++;
	return true;
}

static void
release_own_slot(int code, Datum arg)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	if (slot->pid == MyProcPid)
		forget_slot_locked(slot);
	LWLockRelease(numasched_state->lock);
}

static void
warn_bind_failure(pid_t pid, const char *what, const char *err)
{
	numasched_count(STAT_BIND_FAILURES, 1);
	if (bind_warning_given)
		return;
	bind_warning_given = true;
	ereport(WARNING,
			(errmsg("numasched could not %s, process %d runs unbound", what, (int) pid),
			 errdetail_from_core(err)));
}

static void
apply_memory_policy(int node_index)
{
	const ns_node *node = &numasched_machine->nodes[node_index];
	char		err[NS_ERRLEN];
	ns_memory_policy policy = numasched_memory_policy;

	/*
	 * Remember what was asked for, not what came of it: a refused or skipped
	 * policy is not tried again at every statement, only when the node or
	 * the setting changes.
	 */
	applied_memory_node = node_index;
	applied_memory_setting = numasched_memory_policy;

	if (!ns_node_memory_usable(node))
		policy = NS_MEMORY_NONE;
	/* "none" leaves a process that never had a policy alone */
	if (policy == NS_MEMORY_NONE && kernel_memory_policy == NS_MEMORY_NONE)
		return;
	if (ns_set_memory_policy(policy, node->id, err, sizeof(err)))
		kernel_memory_policy = policy;
	else
		warn_bind_failure(MyProcPid, "set its memory policy", err);
}

/*
 * Brings this process's private memory to its node, once it is bound to the
 * node's CPUs: what it allocated before it was placed (a backend between fork
 * and authentication, a parallel worker before its first executor start) or
 * before it was moved, and, with numasched.copy_inherited_pages, the pages it
 * still shares copy-on-write with the postmaster on another node, which no
 * process without CAP_SYS_NICE can move and NUMA balancing skips.
 */
static void
settle_memory(int node_index)
{
	const ns_node *node = &numasched_machine->nodes[node_index];
	ns_cpuset	memory_nodes;
	ns_settle_result result;
	char		err[NS_ERRLEN];
	instr_time	start,
				duration;

	settled_node = node_index;
	/* with one memory node nothing can be elsewhere */
	if (numasched_memory_policy == NS_MEMORY_NONE || !ns_node_memory_usable(node) ||
		ns_topology_memory_nodes(numasched_machine, false, &memory_nodes) < 2)
		return;
	INSTR_TIME_SET_CURRENT(start);
	if (!ns_settle_private_memory(0, node->id, numasched_copy_inherited_pages, &result,
								  err, sizeof(err)))
	{
		warn_bind_failure(MyProcPid, "move its memory to its node", err);
		return;
	}
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	numasched_count(STAT_PAGES_MIGRATED, result.moved);
	numasched_count(STAT_PAGES_COPIED, result.copied);
	elog(DEBUG1, "numasched brought the private memory of process %d to node %d in %.3f ms: "
		 "%llu resident pages, %llu moved, %llu shared copy-on-write elsewhere, %llu copied",
		 (int) MyProcPid, node->id, INSTR_TIME_GET_MILLISEC(duration),
		 (unsigned long long) result.resident, (unsigned long long) result.moved,
		 (unsigned long long) result.shared, (unsigned long long) result.copied);
}

bool
numasched_place(PGPROC *proc, numasched_kind kind, PGPROC *leader)
{
	bool		self = proc == MyProc;
	pid_t		pid = proc->pid;
	numasched_slot *slot;
	const ns_plan *plan;
	ns_settings settings;
	ns_request	request = {kind == NUMASCHED_PARALLEL_WORKER, -1, -1, -1, 0, NULL, NULL};
	ns_placement where;
	ns_cpuset	cpus;
	bool		bound;
	int			class_id = -1;
	int			parallel_mode = numasched_parallel_placement;
	char		err[NS_ERRLEN];

	if (self)
		numasched_class_changed = false;	/* placed with the settings of now */
	if (!numasched_enabled || numasched_state == NULL || numasched_machine == NULL || pid == 0)
		return false;
	numasched_settings(&settings);
	if (self && kind == NUMASCHED_PARALLEL_WORKER)
		request.worker_number = ParallelWorkerNumber;

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);

	/*
	 * A parallel worker runs with its leader's settings, which may predate a
	 * reload: it uses the plan in force and never rebuilds it.
	 */
	if (!(self && IsParallelWorker()) && !numasched_sync_plan())
	{
		numasched_release();
		return false;
	}
	plan = numasched_shared_plan();
	slot = &numasched_slots[numasched_procno(proc)];

	/*
	 * Placed already; or, placing another process, the PGPROC was looked at
	 * without a lock and may have been given to another process since (a
	 * worker's PGPROC goes back to a free list at its exit).
	 */
	if (plan->ngroups == 0 || slot->pid == pid ||
		(!self && (proc->pid != pid || proc->lockGroupLeader != leader ||
				   BackendPidGetProc(pid) != proc)))
	{
		numasched_release();
		return false;
	}
	if (slot->pid != 0)
		forget_slot_locked(slot);	/* left by a process that is gone */
	if (leader)
	{
		numasched_slot *lslot = &numasched_slots[numasched_procno(leader)];

		if (lslot->pid == leader->pid && lslot->group >= 0)
			request.leader_group = lslot->group;
		else
		{
			/*
			 * Its leader is not placed: numasched.enabled is off for its
			 * role, or it is no client backend (a walsender, a background
			 * worker running queries).
			 */
			numasched_release();
			return false;
		}

		/*
		 * Placed from outside, a worker joins its leader's class and follows
		 * its leader's parallel_placement, which the scheduler cannot read.
		 */
		if (!self)
		{
			parallel_mode = lslot->parallel_mode;
			settings.parallel = parallel_mode;
			if (lslot->class_id >= 0)
			{
				class_id = lslot->class_id;
				numasched_classes[class_id].refs++;
			}
		}
	}
	/* placing itself, a process has its own settings (a worker, its leader's) */
	if (self)
		class_id = take_own_class_locked();
	if (class_id >= 0)
	{
		request.home_groups = &numasched_classes[class_id].home;
		request.reach_groups = &numasched_classes[class_id].reach;
	}
	ns_place(plan, &shared_loads, &settings, &request, &where);
	ns_loads_add(plan, &shared_loads, where.group, NS_DEFAULT_WEIGHT);
	cpus = plan->groups[where.group].cpus;
	/* bound while the lock orders us against anybody moving it */
	bound = ns_bind_cpus(self ? 0 : pid, &cpus, err, sizeof(err));

	slot->pid = pid;
	occupied[(slot - numasched_slots) / 64] |= UINT64CONST(1) << ((slot - numasched_slots) % 64);
	slot->leader_pid = leader ? leader->pid : 0;
	slot->kind = kind;
	slot->bound = bound;
	slot->self_placed = self;
	slot->keep_node = kind == NUMASCHED_PARALLEL_WORKER && parallel_mode == NS_PARALLEL_COMPACT;
	slot->parallel_mode = parallel_mode;
	slot->class_id = class_id;
	slot->node = where.node;
	slot->group = where.group;
	slot->weight = NS_DEFAULT_WEIGHT;
	slot->moves = 0;
	slot->moved_pass = 0;
	slot->placed_at = GetCurrentTimestamp();
	slot->cpus = cpus;
	numasched_release();

	numasched_count(STAT_PLACEMENTS, 1);
	numasched_count(where.hops == 0 ? STAT_HOME : where.hops == 1 ? STAT_ONE_HOP : STAT_FARTHER, 1);
	if (where.hops > 0)
		numasched_count(STAT_STEALS, 1);

	if (self && !exit_callback_registered)
	{
		before_shmem_exit(release_own_slot, 0);
		exit_callback_registered = true;
	}
	if (!bound)
		warn_bind_failure(pid, "set its CPU affinity", err);
	if (self)
	{
		apply_memory_policy(where.node);
		if (bound)
			settle_memory(where.node);
	}

	if (numasched_log_placements)
	{
		char		text[1024];

		ns_cpuset_format(&cpus, text, sizeof(text));
		ereport(LOG,
				(errmsg("numasched placed %s %d on node %d, CPU group %d (CPUs %s)",
						kind == NUMASCHED_BACKEND ? "backend" : "parallel worker", (int) pid,
						numasched_machine->nodes[where.node].id, where.group, text),
				 errhidestmt(true)));
	}
	return true;
}

/* Gives this process's slot back and the CPUs it had before it was placed. */
static void
unplace_self(void)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];
	char		err[NS_ERRLEN];

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	if (slot->pid == MyProcPid)
		forget_slot_locked(slot);
	numasched_release();
	if (!ns_bind_cpus(0, &numasched_machine->usable, err, sizeof(err)))
		warn_bind_failure(MyProcPid, "give back its CPU affinity", err);
	if (kernel_memory_policy != NS_MEMORY_NONE &&
		ns_set_memory_policy(NS_MEMORY_NONE, 0, err, sizeof(err)))
		kernel_memory_policy = NS_MEMORY_NONE;
	applied_memory_node = settled_node = -1;
}

void
numasched_reclass(void)
{
	numasched_slot *slot;
	const ns_plan *plan;
	const ns_cpuset *home;
	ns_settings settings;
	int			moved_to = -1;
	char		err[NS_ERRLEN];

	numasched_class_changed = false;
	if (numasched_state == NULL || numasched_machine == NULL || MyProc == NULL)
		return;
	slot = &numasched_slots[numasched_procno(MyProc)];
	/* unlocked peeks at our own slot: only we place or release it */
	if (slot->pid != MyProcPid)
	{
		if (numasched_enabled)
			numasched_place(MyProc, NUMASCHED_BACKEND, NULL);
		return;
	}
	if (!numasched_enabled)
	{
		unplace_self();
		return;
	}

	numasched_settings(&settings);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	numasched_sync_plan();
	plan = numasched_shared_plan();
	/* the old class first: its entry may be the one the new class needs */
	drop_class_locked(slot->class_id);
	slot->class_id = take_own_class_locked();
	slot->parallel_mode = numasched_parallel_placement;
	home = numasched_slot_home(slot);
	if (slot->group < 0 || (home && !ns_cpuset_test(home, slot->group)))
	{
		ns_request	request = {false, -1, -1, -1, 0, home, slot_reach(slot)};
		ns_placement where;

		/* placed as if new, its own load taken out of where it is */
		if (slot->group >= 0)
			ns_loads_add(plan, &shared_loads, slot->group, -(int64) slot->weight);
		ns_place(plan, &shared_loads, &settings, &request, &where);
		if (slot->group >= 0)
			ns_loads_add(plan, &shared_loads, slot->group, slot->weight);
		if (where.group == slot->group)
			;					/* spilled already, and no group of its own has room */
		else if (ns_bind_cpus(0, &plan->groups[where.group].cpus, err, sizeof(err)))
		{
			numasched_move_slot_locked(slot, where.group);
			slot->bound = true;
			moved_to = where.group;
		}
		else
		{
			numasched_count(STAT_BIND_FAILURES, 1);
			snprintf(pending_warning, sizeof(pending_warning),
					 "numasched could not move process %d into its CPU groups: %s", (int) MyProcPid, err);
		}
	}
	numasched_release();
	if (moved_to >= 0 && numasched_log_placements)
		ereport(LOG,
				(errmsg("numasched moved process %d into its workload class, CPU group %d",
						(int) MyProcPid, moved_to),
				 errhidestmt(true)));
	numasched_follow_slot();
}

void
numasched_follow_slot(void)
{
	numasched_slot *slot;
	int			node;

	if (numasched_state == NULL || MyProc == NULL)
		return;
	slot = &numasched_slots[numasched_procno(MyProc)];
	/* an unlocked read: the worst case is adopting one statement late */
	node = slot->node;
	if (slot->pid != MyProcPid)
		return;
	if (node != applied_memory_node || numasched_memory_policy != applied_memory_setting)
		apply_memory_policy(node);
	/* moved to another node: what it had stays behind unless it follows */
	if (node != settled_node && numasched_migrate_memory && slot->bound)
		settle_memory(node);
}

void
numasched_forget_gone(int first, int end)
{
	/*
	 * A PGPROC keeps its pid after its process exits, so ask the proc array.
	 * Processes that placed themselves give their slot back on exit; only
	 * the ones placed from outside, background workers, need looking at.
	 */
	for (int i = numasched_next_slot(first); i >= 0 && i < end; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		pid_t		pid = slot->pid;

		if (pid == 0 || slot->self_placed || BackendPidGetProc(pid) == &ProcGlobal->allProcs[i])
			continue;
		LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
		if (slot->pid == pid)
			forget_slot_locked(slot);
		LWLockRelease(numasched_state->lock);
	}
}

void
numasched_move_slot_locked(numasched_slot *slot, int group)
{
	const ns_plan *plan = numasched_shared_plan();
	int			to_node = plan->groups[group].node;
	int			hops = plan->hops[slot->node * plan->topo->nnodes + to_node];

	if (slot->group >= 0)
		ns_loads_add(plan, &shared_loads, slot->group, -(int64) slot->weight);
	ns_loads_add(plan, &shared_loads, group, slot->weight);
	slot->group = group;
	slot->node = to_node;
	slot->cpus = plan->groups[group].cpus;
	slot->moves++;
	/* a moved process stays put for a while, whoever moved it */
	slot->moved_pass = Max(numasched_state->pass, 1);
	numasched_count(STAT_MOVES, 1);
	numasched_count(hops == 0 ? STAT_MOVES_SAME_NODE :
					hops == 1 ? STAT_MOVES_ONE_HOP : STAT_MOVES_FARTHER, 1);
}

numasched_move_result
numasched_move_process(PGPROC *proc, pid_t pid, int node_index, int *group, bool within_class)
{
	const ns_cpuset *reach;
	numasched_slot *slot;
	const ns_plan *plan;
	char		err[NS_ERRLEN];
	int			first,
				count;

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	numasched_sync_plan();
	plan = numasched_shared_plan();
	/* checked here, under the lock: the groups may have changed meanwhile */
	first = node_index >= 0 ? plan->node_first_group[node_index] : 0;
	count = node_index >= 0 ? plan->node_ngroups[node_index] : 0;
	if (count == 0 || (*group >= 0 && (*group < first || *group >= first + count)))
	{
		numasched_release();
		*group = count == 0 ? -1 : first;
		return count == 0 ? MOVE_BAD_NODE : MOVE_BAD_GROUP;
	}
	slot = &numasched_slots[numasched_procno(proc)];
	if (slot->pid != pid)
	{
		numasched_release();
		return MOVE_NOT_PLACED;
	}
	/* a class's groups are the superuser's to cross (PGC_SUSET settings) */
	reach = within_class ? slot_reach(slot) : NULL;
	if (*group < 0)
		*group = ns_least_loaded_group(plan, &shared_loads, node_index, reach);
	if (*group < 0 || (reach && !ns_cpuset_test(reach, *group)))
	{
		numasched_release();
		return MOVE_OUTSIDE_CLASS;
	}
	/* the books change only if the kernel took the CPUs */
	if (!ns_bind_cpus(pid, &plan->groups[*group].cpus, err, sizeof(err)))
	{
		numasched_release();
		numasched_count(STAT_BIND_FAILURES, 1);
		ereport(WARNING,
				(errmsg("could not move process %d", (int) pid),
				 errdetail_from_core(err)));
		return MOVE_BIND_FAILED;
	}
	numasched_move_slot_locked(slot, *group);
	slot->bound = true;
	numasched_release();
	return MOVE_DONE;
}

bool
numasched_process_memory(pid_t pid, uint64 *kb_per_node, uint64 *private_kb_per_node)
{
	char		path[64];
	char	   *text;
	bool		ok;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int) pid);
	text = ns_read_text_file(path, NULL);
	if (text == NULL)
		return false;
	ok = (kb_per_node == NULL || ns_numa_maps_kb(text, kb_per_node, NS_MAX_NODES, 0, NULL, 0)) &&
		(private_kb_per_node == NULL || ns_numa_maps_private_kb(text, private_kb_per_node, NS_MAX_NODES));
	free(text);
	return ok;
}

bool
numasched_main_segment(char **start, Size *length, Size *page_size)
{
	uintptr_t	inside = (uintptr_t) numasched_state;
	char	   *maps = ns_read_text_file("/proc/self/smaps", NULL);
	char	   *line;
	bool		found = false;

	if (maps == NULL)
		return false;
	*page_size = sysconf(_SC_PAGESIZE);
	for (line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
	{
		unsigned long lo,
					hi,
					kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
		{
			if (found)
				break;			/* the next mapping: done */
			if (lo <= inside && inside < hi)
			{
				found = true;
				*start = (char *) lo;
				*length = hi - lo;
			}
		}
		else if (found && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			*page_size = kb * 1024;
	}
	free(maps);
	return found && ((PGShmemHeader *) *start)->magic == PGShmemMagic;
}

/*
 * A huge-page segment gets the local policy of its own, in the postmaster
 * before any backend exists (every process inherits it).  Without one, the
 * policy of the process touching a page first decides where it goes, and
 * under numasched.memory_policy = bind a node whose huge-page pool is empty
 * fails the fault with SIGBUS, killing the backend and restarting the whole
 * cluster: the pages are reserved at start, but not per node.  NUMA
 * balancing skips huge-page mappings, so an explicit policy costs nothing
 * there; a 4 kB segment is left alone (an explicit policy would stop NUMA
 * balancing from moving its pages).
 */
void
numasched_guard_huge_page_segment(void)
{
	char	   *start;
	Size		length,
				page_size;
	char		err[NS_ERRLEN];

	if (numasched_machine == NULL || numasched_machine->nnodes < 2 ||
		!numasched_main_segment(&start, &length, &page_size) ||
		page_size <= (Size) sysconf(_SC_PAGESIZE))
		return;
	if (!ns_local_policy_range(start, length, err, sizeof(err)))
		ereport(WARNING,
				(errmsg("numasched could not give the huge-page shared memory segment the local memory policy"),
				 errdetail_from_core(err),
				 errhint("With numasched.memory_policy = bind, a backend on a node without free huge pages can crash the server.")));
}

/*
 * The nodes to interleave shared memory over: numasched.interleave_nodes, or
 * else the nodes with usable CPUs whose memory we may use (a CPU-less node,
 * such as a CXL expander, is farther and slower: only when named).
 */
void
numasched_interleave_nodes(ns_cpuset *nodes)
{
	const char *list = numasched_interleave_nodes_list ? numasched_interleave_nodes_list : "";
	char		err[NS_ERRLEN];

	/* the check hook accepted the list */
	if (list[0] == '\0' || !ns_cpuset_parse(list, strlen(list), NS_MAX_NODES, nodes, err, sizeof(err)))
		ns_topology_memory_nodes(numasched_machine, true, nodes);
}

/* the postmaster's own policy while it initialises shared memory */
static ns_saved_policy postmaster_policy;
static bool postmaster_policy_saved = false;

void
numasched_interleave_initialisation(void)
{
	ns_cpuset	nodes;
	char		err[NS_ERRLEN];

	if (numasched_machine == NULL || postmaster_policy_saved)
		return;
	numasched_interleave_nodes(&nodes);
	if (ns_interleave_own_allocations(&nodes, &postmaster_policy, err, sizeof(err)))
		postmaster_policy_saved = true;
	else
		ereport(WARNING,
				(errmsg("numasched could not interleave the initialisation of shared memory"),
				 errdetail_from_core(err)));
}

/* A crash restart makes a new segment: interleave its initialisation too. */
static void
interleave_next_initialisation(int code, Datum arg)
{
	numasched_interleave_initialisation();
}

void
numasched_interleave_shared_memory(void)
{
	char	   *start;
	Size		length,
				page_size;
	ns_cpuset	nodes;
	ns_interleave_result result;
	char		err[NS_ERRLEN];
	char		list[256];
	instr_time	started,
				duration;

	if (numasched_machine == NULL)
		return;
	/* from here on the postmaster allocates as it did before */
	if (postmaster_policy_saved && !ns_restore_policy(&postmaster_policy, err, sizeof(err)))
		ereport(WARNING,
				(errmsg("numasched could not restore the memory policy of the postmaster"),
				 errdetail_from_core(err)));
	postmaster_policy_saved = false;
	on_shmem_exit(interleave_next_initialisation, 0);

	if (!numasched_main_segment(&start, &length, &page_size))
	{
		ereport(WARNING,
				(errmsg("numasched could not find the main shared memory segment, it is not interleaved")));
		return;
	}
	numasched_interleave_nodes(&nodes);
	ns_cpuset_format(&nodes, list, sizeof(list));
	INSTR_TIME_SET_CURRENT(started);
	if (!ns_interleave_range(start, length, page_size, &nodes, palloc(ns_resident_map_size(length)),
							 &result, err, sizeof(err)))
	{
		ereport(WARNING,
				(errmsg("numasched could not interleave the main shared memory segment"),
				 errdetail_from_core(err)));
		return;
	}
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, started);
	ereport(LOG,
			(errmsg("numasched interleaved the main shared memory segment (%zu MB) over nodes %s",
					length / (1024 * 1024), list),
			 errdetail("%llu of its %llu resident pages of %zu kB were moved to their interleave node in %.1f ms%s.",
					   (unsigned long long) result.moved, (unsigned long long) result.resident,
					   page_size / 1024, INSTR_TIME_GET_MILLISEC(duration),
					   result.not_moved ? psprintf(", %llu could not be moved", (unsigned long long) result.not_moved) : "")));
}
