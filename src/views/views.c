/*
 * views.c - the SQL surface: views' functions, numasched_move and
 * numasched_reset_stats
 *
 * Privileges follow pg_stat_activity (other roles' processes in full only for
 * pg_read_all_stats) and pg_terminate_backend (moving needs the rights that
 * signalling needs).  Shared state is copied under the lock and the tuples
 * are built after releasing it.
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "backend/books.h"
#include "backend/memory.h"
#include "backend/placement.h"
#include "backend/priority.h"
#include "backend/segment.h"
#include "backend/state.h"

PG_FUNCTION_INFO_V1(numasched_topology);
PG_FUNCTION_INFO_V1(numasched_distances);
PG_FUNCTION_INFO_V1(numasched_groups);
PG_FUNCTION_INFO_V1(numasched_processes);
PG_FUNCTION_INFO_V1(numasched_stats);
PG_FUNCTION_INFO_V1(numasched_move);
PG_FUNCTION_INFO_V1(numasched_reset_stats);
PG_FUNCTION_INFO_V1(numasched_memory);
PG_FUNCTION_INFO_V1(numasched_locality);
PG_FUNCTION_INFO_V1(numasched_shared_memory_pages);

static text *
cpus_text(const ns_cpuset *cpus)
{
	char		buf[256];
	size_t		need = ns_cpuset_format(cpus, buf, sizeof(buf));
	char	   *big;
	text	   *result;

	if (need < sizeof(buf))
		return cstring_to_text(buf);
	big = palloc(need + 1);
	ns_cpuset_format(cpus, big, need + 1);
	result = cstring_to_text(big);
	pfree(big);
	return result;
}

/* A copy of the shared plan and loads, taken under the lock. */
typedef struct plan_copy
{
	int			ngroups;
	ns_group   *groups;
	int		   *node_first_group;
	int		   *node_ngroups;
	int		   *node_nsteal;
	int		   *steal;
	uint32	   *group_load;
} plan_copy;

static void
copy_plan(plan_copy *copy)
{
	int			nn = numasched_machine->nnodes;
	int			max_groups = Max(numasched_state->max_groups, 1);
	const ns_plan *plan;

	/* room for the most groups first: nothing that can fail under the lock */
	copy->groups = palloc(max_groups * sizeof(ns_group));
	copy->node_first_group = palloc(nn * sizeof(int));
	copy->node_ngroups = palloc(nn * sizeof(int));
	copy->node_nsteal = palloc(nn * sizeof(int));
	copy->steal = palloc(nn * nn * sizeof(int));
	copy->group_load = palloc(max_groups * sizeof(uint32));
	LWLockAcquire(numasched_state->lock, LW_SHARED);
	plan = numasched_shared_plan();
	copy->ngroups = plan->ngroups;
	memcpy(copy->groups, plan->groups, plan->ngroups * sizeof(ns_group));
	memcpy(copy->node_first_group, plan->node_first_group, nn * sizeof(int));
	memcpy(copy->node_ngroups, plan->node_ngroups, nn * sizeof(int));
	memcpy(copy->node_nsteal, plan->node_nsteal, nn * sizeof(int));
	memcpy(copy->steal, plan->steal, nn * nn * sizeof(int));
	memcpy(copy->group_load, numasched_shared_loads()->group, plan->ngroups * sizeof(uint32));
	LWLockRelease(numasched_state->lock);
}

/* ERROR unless preloaded; false when the topology could not be read. */
static bool
machine_known(void)
{
	numasched_require_loaded();
	return numasched_machine != NULL;
}

Datum
numasched_topology(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	plan_copy	plan;

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	copy_plan(&plan);
	for (int n = 0; n < numasched_machine->nnodes; n++)
	{
		const ns_node *node = &numasched_machine->nodes[n];
		Datum		values[7];
		bool		nulls[7] = {0};
		Datum	   *steal = palloc(Max(plan.node_nsteal[n], 1) * sizeof(Datum));

		for (int k = 0; k < plan.node_nsteal[n]; k++)
			steal[k] = Int32GetDatum(numasched_machine->nodes[plan.steal[n * numasched_machine->nnodes + k]].id);
		values[0] = Int32GetDatum(node->id);
		values[1] = PointerGetDatum(cpus_text(&node->cpus));
		values[2] = Int32GetDatum(node->ncpus);
		values[3] = Int64GetDatum((int64) (node->memory_kb / 1024));
		values[4] = BoolGetDatum(!node->has_cpus);
		values[5] = Int32GetDatum(plan.node_ngroups[n]);
		if (plan.node_ngroups[n] > 0)
			values[6] = PointerGetDatum(construct_array(steal, plan.node_nsteal[n], INT4OID,
														sizeof(int32), true, TYPALIGN_INT));
		else
			nulls[6] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

Datum
numasched_distances(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	for (int a = 0; a < numasched_machine->nnodes; a++)
	{
		for (int b = 0; b < numasched_machine->nnodes; b++)
		{
			Datum		values[3];
			bool		nulls[3] = {0};

			values[0] = Int32GetDatum(numasched_machine->nodes[a].id);
			values[1] = Int32GetDatum(numasched_machine->nodes[b].id);
			values[2] = Int32GetDatum(ns_distance(numasched_machine, a, b));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	PG_RETURN_VOID();
}

/*
 * What a view shows of a placed process: its slot, and if asked its class
 * (the groups it is placed in, whether it may leave them) and the CPUs the
 * kernel was told for it (its group's and those lent to it).
 */
typedef struct slot_copy
{
	numasched_slot slot;
	bool		has_class;
	bool		spill_never;
	ns_cpuset	class_home;
	ns_cpuset	kernel_cpus;
} slot_copy;

/*
 * Copies the occupied slots into "copy" (room for "room"), lock held
 * shared: nothing here can fail, and the copies are made one by one.  The
 * number of occupied slots, which may be more than "room".
 */
static int
copy_slots_locked(slot_copy *copy, int room, bool details)
{
	int			n = 0;

	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		const numasched_slot *slot = &numasched_slots[i];
		slot_copy  *c = &copy[n];

		if (slot->pid == 0)
			continue;
		if (n++ >= room)
			continue;			/* counted: the caller makes room and copies again */
		c->slot = *slot;
		/* the copy's cpus: what it has with nothing lent, to tell what is */
		if (slot->group >= 0 && slot->group < numasched_state->ngroups)
			numasched_group_cpus_for(slot, slot->group, &c->slot.cpus);
		if (!details)
			continue;
		numasched_slot_kernel_cpus(slot, &c->kernel_cpus);
		c->has_class = slot->class_id >= 0;
		if (c->has_class)
		{
			c->spill_never = numasched_classes[slot->class_id].spill_never;
			c->class_home = numasched_classes[slot->class_id].home;
		}
	}
	return n;
}

/*
 * A copy of the occupied slots, with their classes and the CPUs the kernel
 * was told if "details".  Room for them is made before the lock is taken, by
 * how many there were a moment ago, and made again if more came meanwhile:
 * a view never allocates under the lock, and never for every PGPROC.
 */
static slot_copy *
copy_slots(int *count, bool details)
{
	int			room = numasched_occupied_slots() + 16;

	for (;;)
	{
		slot_copy  *copy = palloc(Max(room, 1) * sizeof(slot_copy));
		int			n;

		LWLockAcquire(numasched_state->lock, LW_SHARED);
		n = copy_slots_locked(copy, room, details);
		LWLockRelease(numasched_state->lock);
		if (n <= room)
		{
			*count = n;
			return copy;
		}
		pfree(copy);
		room = n + 16;
	}
}

Datum
numasched_groups(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	plan_copy	plan;
	slot_copy  *slots;
	int			nslots;
	int		   *processes;

	/*
	 * With one process in a group, its figures are that session's activity:
	 * as pg_stat_activity's, they are pg_read_all_stats's to see.
	 */
	bool		sees_activity = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	copy_plan(&plan);
	slots = copy_slots(&nslots, false);
	processes = palloc0(Max(plan.ngroups, 1) * sizeof(int));
	for (int i = 0; i < nslots; i++)
		if (slots[i].slot.group >= 0 && slots[i].slot.group < plan.ngroups)
			processes[slots[i].slot.group]++;
	for (int g = 0; g < plan.ngroups; g++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};

		values[0] = Int32GetDatum(g);
		values[1] = Int32GetDatum(numasched_machine->nodes[plan.groups[g].node].id);
		values[2] = PointerGetDatum(cpus_text(&plan.groups[g].cpus));
		values[3] = Int32GetDatum(plan.groups[g].ncpus);
		values[4] = Float8GetDatum((double) plan.group_load[g] / NS_CPU_LOAD);
		values[5] = Int32GetDatum(processes[g]);
		/* running now, as lending at a statement's start counts them */
		values[6] = Int32GetDatum((int32) pg_atomic_read_u32(&numasched_running[g].statements));
		nulls[4] = nulls[5] = nulls[6] = !sees_activity;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* numasched_processes.backend_type */
static Datum
backend_type(const numasched_slot *slot)
{
	return PointerGetDatum(cstring_to_text(slot->kind == NUMASCHED_BACKEND ?
										   "client backend" : "parallel worker"));
}

/* May the current user see the details of process "pid"? */
static bool
may_see(pid_t pid)
{
	PGPROC	   *proc;

	if (has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		return true;
	proc = BackendPidGetProc(pid);
	return proc != NULL && has_privs_of_role(GetUserId(), proc->roleId);
}

Datum
numasched_processes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	slot_copy  *slots;
	int			nslots;
	ns_cpuset	every_group;
	bool		companion;

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	slots = copy_slots(&nslots, true);
	/* the kernel's answer: the sched_ext scheduler loaded now */
	companion = ns_companion_loaded("/sys");
	ns_cpuset_zero(&every_group);
	for (int g = 0; g < numasched_state->ngroups; g++)
		ns_cpuset_set(&every_group, g);
	for (int i = 0; i < nslots; i++)
	{
		numasched_slot *slot = &slots[i].slot;
		ns_cpuset  *kernel_cpus = &slots[i].kernel_cpus;
		Datum		values[15];
		bool		nulls[15] = {0};
		int			background;
		int			sched_ext;

		values[0] = Int32GetDatum(slot->pid);
		values[1] = backend_type(slot);
		if (!may_see(slot->pid))
		{
			for (int c = 2; c < 15; c++)
				nulls[c] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		values[2] = Int32GetDatum(slot->leader_pid);
		nulls[2] = slot->leader_pid == 0;
		values[3] = Int32GetDatum(numasched_machine->nodes[slot->node].id);
		values[4] = Int32GetDatum(slot->group);
		nulls[4] = slot->group < 0;
		values[5] = PointerGetDatum(cpus_text(kernel_cpus));
		values[6] = BoolGetDatum(slot->bound);
		values[7] = TimestampTzGetDatum(slot->placed_at);
		values[8] = Int64GetDatum(slot->moves);
		/* its class: the groups it is placed in, and whether it may leave them */
		values[9] = PointerGetDatum(cpus_text(slots[i].has_class ? &slots[i].class_home : &every_group));
		values[10] = PointerGetDatum(cstring_to_text(slots[i].has_class && slots[i].spill_never ? "never" : "nearest"));
		/* the CPU it used recently, as the scheduler measured it */
		values[11] = Float8GetDatum((double) slot->weight / NS_CPU_LOAD);
		/* who picks its CPU at each wakeup: the kernel within its mask, or the companion */
		sched_ext = ns_is_sched_ext(slot->pid);
		values[14] = PointerGetDatum(cstring_to_text(sched_ext == 1 && companion ? "sched_ext" : "masks"));
		nulls[14] = sched_ext < 0;
		/* the CPUs of another group it may use now, lent for a burst */
		if (slot->background || (sched_ext == 1 && companion) ||
			ns_cpuset_equal(kernel_cpus, &slot->cpus))
			nulls[12] = true;
		else
		{
			ns_cpuset	lent = *kernel_cpus;

			for (int cpu = ns_cpuset_next(&slot->cpus, 0); cpu >= 0; cpu = ns_cpuset_next(&slot->cpus, cpu + 1))
				ns_cpuset_clear(&lent, cpu);
			values[12] = PointerGetDatum(cpus_text(&lent));
		}
		/* the kernel's answer, not the books' */
		background = numasched_is_background(slot->pid);
		values[13] = PointerGetDatum(cstring_to_text(background == 1 ? "background" : "normal"));
		nulls[13] = background < 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

Datum
numasched_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[NUMASCHED_NSTATS + 3];
	bool		nulls[NUMASCHED_NSTATS + 3] = {0};
	uint64		starts;
	TimestampTz last_pass;

	InitMaterializedSRF(fcinfo, 0);
	numasched_require_loaded();
	for (int i = 0; i < NUMASCHED_NSTATS; i++)
		values[i] = Int64GetDatum((int64) pg_atomic_read_u64(&numasched_state->stats[i]));
	/* the scheduler's first start is not a restart */
	starts = pg_atomic_read_u64(&numasched_state->stats[STAT_SCHEDULER_STARTS]);
	values[STAT_SCHEDULER_STARTS] = Int64GetDatum(starts > 0 ? (int64) starts - 1 : 0);
	last_pass = (TimestampTz) pg_atomic_read_u64(&numasched_state->last_pass);
	values[NUMASCHED_NSTATS] = TimestampTzGetDatum(last_pass);
	nulls[NUMASCHED_NSTATS] = last_pass == 0;
	values[NUMASCHED_NSTATS + 1] = CStringGetTextDatum(numasched_memory_calls_state());
	LWLockAcquire(numasched_state->lock, LW_SHARED);
	values[NUMASCHED_NSTATS + 2] = TimestampTzGetDatum(numasched_state->stats_reset);
	LWLockRelease(numasched_state->lock);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	PG_RETURN_VOID();
}

Datum
numasched_reset_stats(PG_FUNCTION_ARGS)
{
	numasched_require_loaded();
	for (int i = 0; i < NUMASCHED_NSTATS; i++)
		if (i != STAT_SCHEDULER_STARTS)
			pg_atomic_write_u64(&numasched_state->stats[i], 0);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	numasched_state->stats_reset = GetCurrentTimestamp();
	LWLockRelease(numasched_state->lock);
	PG_RETURN_VOID();
}

/* The rules of pg_signal_backend: superusers' processes need superuser. */
static void
check_may_move(PGPROC *proc)
{
	/* a backend that has not set its role yet counts as a superuser's */
	if ((!OidIsValid(proc->roleId) || superuser_arg(proc->roleId)) && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to move process"),
				 errdetail("Only superusers can move processes of superusers.")));
	if (!has_privs_of_role(GetUserId(), proc->roleId) &&
		!has_privs_of_role(GetUserId(), ROLE_PG_SIGNAL_BACKEND))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to move process"),
				 errdetail("Only roles with privileges of the role whose process is being moved or with privileges of the \"pg_signal_backend\" role may move this process.")));
}

/* ERROR unless the node has CPU groups and "group" (unless any) is one of them. */
static void
check_node_and_group(int node_id, int node_index, int group, bool any_group)
{
	int			first = 0,
				count = 0;

	if (node_index >= 0)
	{
		LWLockAcquire(numasched_state->lock, LW_SHARED);
		first = numasched_shared_plan()->node_first_group[node_index];
		count = numasched_shared_plan()->node_ngroups[node_index];
		LWLockRelease(numasched_state->lock);
	}
	if (count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("node %d is not used by numasched", node_id),
				 errhint("The nodes with CPU groups are listed in the view numasched_topology.")));
	if (!any_group && (group < first || group >= first + count))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("CPU group %d is not on node %d", group, node_id),
				 errhint("Node %d has CPU groups %d to %d.", node_id, first, first + count - 1)));
}

Datum
numasched_move(PG_FUNCTION_ARGS)
{
	int32		pid = PG_GETARG_INT32(0);
	int32		node_id = PG_GETARG_INT32(1);
	bool		any_group = PG_ARGISNULL(2);
	int			requested = any_group ? -1 : PG_GETARG_INT32(2);
	int			group = requested;
	int			node_index;
	PGPROC	   *proc;
	numasched_move_result result = MOVE_NOT_PLACED;

	numasched_require_loaded();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	node_index = numasched_machine ? ns_topology_node_index(numasched_machine, node_id) : -1;
	/* -1 is "any group" to numasched_move_process: only NULL means that here */
	if (!any_group && requested < 0)
		check_node_and_group(node_id, node_index, requested, false);
	proc = BackendPidGetProc(pid);
	if (proc != NULL)
	{
		check_may_move(proc);
		/* the node and group are checked under the lock, against the plan in force */
		result = numasched_move_process(proc, pid, node_index, &group, !superuser());
	}
	/* bad arguments are errors, also with a bad pid */
	if (proc == NULL || result == MOVE_BAD_NODE || result == MOVE_BAD_GROUP)
		check_node_and_group(node_id, node_index, requested, any_group);
	if (result == MOVE_OUTSIDE_CLASS)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to move process %d out of its workload class", pid),
				 errdetail("Its numasched.nodes, numasched.cpu_groups and numasched.spill do not allow node %d%s.",
						   node_id, !any_group ? psprintf(", CPU group %d", requested) : ""),
				 errhint("Only superusers may move a process out of its workload class.")));
	if (proc == NULL)
	{
		ereport(WARNING,
				(errmsg("PID %d is not a PostgreSQL backend process", pid)));
		PG_RETURN_BOOL(false);
	}
	if (result == MOVE_NOT_PLACED)
		ereport(WARNING,
				(errmsg("PID %d is not placed by numasched", pid),
				 errhint("numasched places client backends and parallel workers.")));
	PG_RETURN_BOOL(result == MOVE_DONE);
}

/*
 * One row per node: pages (of "page_kb" kB) and MB, and with
 * "private_kb_per_node" the private pages too.
 */
static void
put_node_rows(ReturnSetInfo *rsinfo, const uint64 *kb_per_node, const uint64 *private_kb_per_node,
			  Size page_kb)
{
	for (int id = 0; id < NS_MAX_NODES; id++)
	{
		Datum		values[4];
		bool		nulls[4] = {0};

		if (kb_per_node[id] == 0 && ns_topology_node_index(numasched_machine, id) < 0)
			continue;
		values[0] = Int32GetDatum(id);
		values[1] = Int64GetDatum((int64) (kb_per_node[id] / page_kb));
		values[2] = Float8GetDatum((double) kb_per_node[id] / 1024.0);
		if (private_kb_per_node)
			values[3] = Int64GetDatum((int64) (private_kb_per_node[id] / page_kb));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
numasched_memory(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		pid = PG_GETARG_INT32(0);
	uint64	   *kb;
	uint64	   *private_kb;

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	if (BackendPidGetProc(pid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("PID %d is not a PostgreSQL backend process", pid)));
	if (!may_see(pid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to see the memory of process %d", pid),
				 errdetail("Only roles with privileges of the role of the process or of \"pg_read_all_stats\" may see it.")));
	kb = palloc0(NS_MAX_NODES * sizeof(uint64));
	private_kb = palloc0(NS_MAX_NODES * sizeof(uint64));
	if (!numasched_process_memory(pid, kb, private_kb))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"/proc/%d/numa_maps\": %m", pid)));
	put_node_rows(rsinfo, kb, private_kb, sysconf(_SC_PAGESIZE) / 1024);
	PG_RETURN_VOID();
}

/*
 * Per placed process: its private pages on the node it is placed on and
 * elsewhere, from its numa_maps.  Processes gone meanwhile are left out;
 * other roles' processes show no figures, as in numasched_processes.
 */
Datum
numasched_locality(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	slot_copy  *slots;
	int			nslots;
	Size		page_kb = sysconf(_SC_PAGESIZE) / 1024;
	uint64	   *kb = palloc(NS_MAX_NODES * sizeof(uint64));

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	slots = copy_slots(&nslots, false);
	for (int i = 0; i < nslots; i++)
	{
		numasched_slot *slot = &slots[i].slot;
		int			node_id = numasched_machine->nodes[slot->node].id;
		Datum		values[6];
		bool		nulls[6] = {0};
		uint64		local = 0,
					elsewhere = 0;

		CHECK_FOR_INTERRUPTS();
		values[0] = Int32GetDatum(slot->pid);
		values[1] = backend_type(slot);
		values[2] = Int32GetDatum(node_id);
		if (!may_see(slot->pid))
		{
			for (int c = 2; c < 6; c++)
				nulls[c] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		memset(kb, 0, NS_MAX_NODES * sizeof(uint64));
		if (!numasched_process_memory(slot->pid, NULL, kb))
			continue;			/* gone meanwhile */
		for (int id = 0; id < NS_MAX_NODES; id++)
			if (id == node_id)
				local += kb[id] / page_kb;
			else
				elsewhere += kb[id] / page_kb;
		values[3] = Int64GetDatum((int64) local);
		values[4] = Int64GetDatum((int64) elsewhere);
		values[5] = Float8GetDatum(local + elsewhere > 0 ? 100.0 * local / (local + elsewhere) : 100.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

typedef struct page_count
{
	uint64	   *kb;				/* per node id */
	Size		page_kb;
} page_count;

static bool
count_shared_pages(void **pages, const int *nodes, const size_t *index, int n,
				   void *arg, char *err, size_t errlen)
{
	page_count *count = arg;

	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < n; i++)
		if (nodes[i] >= 0 && nodes[i] < NS_MAX_NODES)
			count->kb[nodes[i]] += count->page_kb;
	return true;
}

/*
 * Pages per node of the main shared memory segment: only the resident ones
 * are looked up, and none is faulted in.  With huge pages the kernel tells
 * a process only of the pages in its own page tables (mincore, move_pages
 * and numa_maps alike walk them): those the postmaster had touched when it
 * forked this backend and those this backend touched.  A page another
 * backend faulted in is invisible, and faulting it in here would allocate
 * the pages nobody has touched yet, on this backend's node: the count is
 * what this backend sees, and a NOTICE says so.
 */
Datum
numasched_shared_memory_pages(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *start;
	Size		length,
				page_size,
				page_kb;
	page_count	count;
	char		err[NS_ERRLEN];

	InitMaterializedSRF(fcinfo, 0);
	if (!machine_known())
		PG_RETURN_VOID();
	if (!numasched_main_segment(&start, &length, &page_size, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not find the main shared memory segment in /proc/self/smaps")));
	count.kb = palloc0(NS_MAX_NODES * sizeof(uint64));
	count.page_kb = page_kb = page_size / 1024;
	if (!ns_visit_resident_pages(start, length, page_size, true, count_shared_pages, &count,
								 err, sizeof(err)))
		ereport(ERROR,
				(errmsg("could not count the pages of the main shared memory segment"),
				 errdetail_from_core(err)));
	put_node_rows(rsinfo, count.kb, NULL, page_kb);
	if (page_size > (Size) sysconf(_SC_PAGESIZE))
		ereport(NOTICE,
				(errmsg("with huge pages, only the pages mapped in this backend are counted"),
				 errdetail("Pages that only other processes have touched are not visible to this one."),
				 errhint("The huge pages in use per node, by any process, are nr_hugepages minus free_hugepages in /sys/devices/system/node/node*/hugepages/.")));
	PG_RETURN_VOID();
}
