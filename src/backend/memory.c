/*
 * memory.c - a process's private memory: its memory policy, and bringing
 * what it has to its node
 *
 * The postmaster tries the kernel's memory calls once at start.  With one
 * usable memory node, or where the kernel refuses them (a container's
 * seccomp filter), nothing here calls the kernel again: it is said once, at
 * LOG, and CPUs are placed as before.
 *
 * Settling copies memory only where it pays: a client backend brings its
 * memory to its node at the first statement that starts once it has lived
 * NUMASCHED_SETTLE_AFTER_MS, when PostgresMain has freed PostmasterContext
 * and the process has shown it lives; a short connection copies nothing.  A
 * parallel worker moves its own pages at placement but copies none of the
 * postmaster's.  Backends settle one at a time in a server: a settle moves
 * what the backend wrote before it was placed (its caches: thousands of
 * pages where it started on another node), and clients that connect together
 * would all settle in the same second, a burst of work every statement then
 * waits behind.  One that finds another settling settles at a later
 * statement.
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/timestamp.h"

#include "backend/memory.h"
#include "backend/report.h"
#include "backend/state.h"
#include "core/ns_numa_maps.h"
#include "os/ns_settle.h"

#define NUMASCHED_SETTLE_AFTER_MS 1000
/* how long a turn to settle lasts at most: one that died settling holds it no longer */
#define NUMASCHED_SETTLE_TURN_MS 1000

/* set in the postmaster, inherited by every process it forks */
static int	usable_calls = 0;		/* NS_CALL_* bits; 0 on one memory node */
static int	refused_calls = 0;
static ns_saved_policy inherited_policy;	/* the postmaster's own policy */

/* this process */
static int	applied_memory_node = -1;	/* the node of the last adoption */
static int	applied_memory_setting = -1;	/* numasched.memory_policy then */
static bool applied_background = false;	/* and whether it ran at background priority */
static bool applied_companion = false;	/* and under the sched_ext companion */
static bool applied_nodes_shared = false;	/* and with numasched.node_binding = preferred */
static int	kernel_memory_policy = NS_MEMORY_NONE;	/* NONE: as inherited */
static int	settled_node = -1;	/* the node its memory was last brought to */
/* the node its inherited pages were last copied to: a move makes those still shared remote again */
static int	inherited_copied_node = -1;

static const char *refused_call_names(void);

void
numasched_probe_memory(void)
{
	ns_cpuset	nodes;
	char		err[4 * NS_ERRLEN];
	char		policy[320];

	/* with one memory node nothing can be elsewhere: no call at all */
	if (numasched_machine == NULL || ns_topology_memory_nodes(numasched_machine, false, &nodes) < 2)
		return;
	refused_calls = ns_refused_memory_calls(&inherited_policy, err, sizeof(err));
	usable_calls = NS_CALL_ALL & ~refused_calls;
	if (refused_calls)
		ereport(LOG,
				(errmsg("numasched cannot make the memory calls %s, the kernel refused them",
						refused_call_names()),
				 errdetail_from_core(err),
				 errhint("CPUs are placed as usual; memory numasched would place stays where the kernel puts it. In a container, the default seccomp profile allows set_mempolicy, mbind and get_mempolicy only with CAP_SYS_NICE, and move_pages not at all.")));
	if (!ns_policy_is_default(&inherited_policy))
	{
		ns_format_policy(&inherited_policy, policy, sizeof(policy));
		ereport(LOG,
				(errmsg("numasched found the postmaster under the memory policy %s", policy),
				 errdetail("Backends and parallel workers allocate their private memory by numasched.memory_policy instead (none keeps %s); the main shared memory segment keeps %s unless numasched.shared_memory = interleave.",
						   policy, policy)));
	}
}

bool
numasched_memory_call_usable(int calls)
{
	return (usable_calls & calls) == calls;
}

const ns_saved_policy *
numasched_inherited_policy(void)
{
	return usable_calls != 0 && !ns_policy_is_default(&inherited_policy) ? &inherited_policy : NULL;
}

/* "set_mempolicy, mbind": the calls the kernel refused at server start */
static const char *
refused_call_names(void)
{
	static const struct
	{
		int			call;
		const char *name;
	}			calls[] = {
		{NS_CALL_SET_MEMPOLICY, "set_mempolicy"},
		{NS_CALL_GET_MEMPOLICY, "get_mempolicy"},
		{NS_CALL_MBIND, "mbind"},
		{NS_CALL_MOVE_PAGES, "move_pages"},
	};
	StringInfoData names;

	initStringInfo(&names);
	for (int i = 0; i < lengthof(calls); i++)
		if (refused_calls & calls[i].call)
			appendStringInfo(&names, "%s%s", names.len ? ", " : "", calls[i].name);
	return names.data;
}

const char *
numasched_memory_calls_state(void)
{
	if (refused_calls != 0)
		return psprintf("refused: %s", refused_call_names());
	return usable_calls ? "used" : "not needed: one memory node";
}

/*
 * May the process be lent the CPUs of another node (lending.c), or run on
 * them where the nodes share their CPUs, at background priority or under
 * the companion?  Then "local" must mean its home node wherever it runs.
 */
static bool
may_run_on_other_nodes(int node_index, bool background)
{
	if (!numasched_lend_idle_cpus && !background && !numasched_companion_in_force() &&
		!numasched_state->nodes_shared)
		return false;
	for (int n = 0; n < numasched_machine->nnodes; n++)
		if (n != node_index && numasched_machine->nodes[n].ncpus > 0 &&
			(numasched_max_steal_distance == 0 ||
			 ns_distance(numasched_machine, node_index, n) <= numasched_max_steal_distance))
			return true;
	return false;
}

static void
apply_memory_policy(int node_index, bool background)
{
	const ns_node *node = &numasched_machine->nodes[node_index];
	char		err[NS_ERRLEN];
	ns_memory_policy policy = numasched_memory_policy;
	bool		kernel_default;

	/*
	 * Remember what was asked for, not what came of it: a refused or skipped
	 * policy is not tried again at every statement, only when the node or
	 * the setting changes.
	 */
	applied_memory_node = node_index;
	applied_memory_setting = numasched_memory_policy;
	applied_background = background;
	applied_companion = numasched_companion_in_force();
	applied_nodes_shared = numasched_state->nodes_shared;

	if (!numasched_memory_call_usable(NS_CALL_SET_MEMPOLICY))
		return;
	if (!ns_node_memory_usable(node))
		policy = NS_MEMORY_NONE;

	/*
	 * Lent another node's CPUs for a burst, a process allocates at home, and
	 * NUMA balancing leaves what it has where it is (it migrates no page of
	 * a process with a policy of its own): a short visit moves nothing.
	 */
	if (policy == NS_MEMORY_LOCAL && may_run_on_other_nodes(node_index, background))
		policy = NS_MEMORY_PREFERRED;
	/* "none" leaves a process that never had a policy alone */
	if (policy == NS_MEMORY_NONE && kernel_memory_policy == NS_MEMORY_NONE)
		return;
	/* local allocation is the kernel's default: a process that has it needs no call */
	kernel_default = kernel_memory_policy == NS_MEMORY_LOCAL ||
		(kernel_memory_policy == NS_MEMORY_NONE && ns_policy_is_default(&inherited_policy));
	if ((policy == NS_MEMORY_LOCAL || policy == NS_MEMORY_NONE) && kernel_default)
		return;
	if (ns_set_memory_policy(policy, node->id, err, sizeof(err)))
		kernel_memory_policy = policy == NS_MEMORY_NONE ? NS_MEMORY_LOCAL : policy;
	else
	{
		numasched_count(STAT_BIND_FAILURES, 1);
		numasched_warn_failure(FAILURE_MEMORY_POLICY, err,
							   "numasched could not set the memory policy of process %d for node %d", (int) MyProcPid, node->id);
	}
}

/* Whether settling on the node would make any memory call at all. */
static bool
settling_calls_kernel(int node_index)
{
	return numasched_memory_policy != NS_MEMORY_NONE &&
		ns_node_memory_usable(&numasched_machine->nodes[node_index]) &&
		numasched_memory_call_usable(NS_CALL_MOVE_PAGES);
}

/*
 * Brings this process's private memory to its node, once it is bound to the
 * node's CPUs: what it allocated before it was placed (a backend during its
 * start-up, a parallel worker before its first executor start) or
 * before it was moved, and, with "copy" and numasched.copy_inherited_pages,
 * once per process, the pages it still shares copy-on-write with the
 * postmaster on another node, which no process without CAP_SYS_NICE can move
 * and NUMA balancing skips.
 */
static void
settle_memory(int node_index, bool copy)
{
	const ns_node *node = &numasched_machine->nodes[node_index];
	ns_settle_result result;
	char		err[NS_ERRLEN];
	instr_time	start,
				duration;

	settled_node = node_index;
	if (!settling_calls_kernel(node_index))
		return;
	copy = copy && numasched_copy_inherited_pages && inherited_copied_node != node_index;
	INSTR_TIME_SET_CURRENT(start);
	if (!ns_settle_private_memory(0, node->id, copy, &result, err, sizeof(err)))
	{
		numasched_count(STAT_BIND_FAILURES, 1);
		numasched_warn_failure(FAILURE_SETTLE, err,
							   "numasched could not move the private memory of process %d to node %d", (int) MyProcPid, node->id);
		return;
	}
	if (copy)
		inherited_copied_node = node_index;
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

/*
 * Whether no other process of the server settles now; if so, this one's
 * turn has begun, until "*mine" (a clock stepped back frees a turn that
 * would otherwise end too far ahead).
 */
static bool
take_settle_turn(uint64 *mine)
{
	TimestampTz now = GetCurrentTimestamp();
	uint64		until = pg_atomic_read_u64(&numasched_state->settling_until);

	if ((TimestampTz) until > now &&
		(TimestampTz) until <= TimestampTzPlusMilliseconds(now, NUMASCHED_SETTLE_TURN_MS))
		return false;
	*mine = (uint64) TimestampTzPlusMilliseconds(now, NUMASCHED_SETTLE_TURN_MS);
	return pg_atomic_compare_exchange_u64(&numasched_state->settling_until, &until, *mine);
}

/* Ends this process's turn, unless it ran out and another's has begun. */
static void
end_settle_turn(uint64 mine)
{
	(void) pg_atomic_compare_exchange_u64(&numasched_state->settling_until, &mine, 0);
}

/*
 * settle_memory in this process's turn; while another settles, nothing (a
 * later statement tries again).  One that will make no memory call takes no
 * turn.
 */
static void
settle_memory_in_turn(int node_index, bool copy)
{
	uint64		mine;

	if (!settling_calls_kernel(node_index))
		settle_memory(node_index, copy);
	else if (take_settle_turn(&mine))
	{
		settle_memory(node_index, copy);
		end_settle_turn(mine);
	}
}

void
numasched_memory_placed(int node_index, numasched_kind kind, bool bound)
{
	apply_memory_policy(node_index, numasched_slots[numasched_procno(MyProc)].background);
	if (bound && kind == NUMASCHED_PARALLEL_WORKER)
		settle_memory(node_index, false);
}

void
numasched_memory_unplaced(void)
{
	char		err[NS_ERRLEN];

	if (kernel_memory_policy != NS_MEMORY_NONE && kernel_memory_policy != NS_MEMORY_LOCAL &&
		ns_set_memory_policy(NS_MEMORY_NONE, 0, err, sizeof(err)))
		kernel_memory_policy = NS_MEMORY_LOCAL;
	applied_memory_node = settled_node = -1;
}

void
numasched_follow_slot(void)
{
	numasched_slot *slot;
	int			node;

	/* one memory node, or every call refused: nothing to follow */
	if (usable_calls == 0 || numasched_state == NULL || MyProc == NULL)
		return;
	slot = &numasched_slots[numasched_procno(MyProc)];
	/* an unlocked read: the worst case is adopting one statement late */
	node = slot->node;
	if (slot->pid != MyProcPid)
		return;
	if (node != applied_memory_node || numasched_memory_policy != applied_memory_setting ||
		slot->background != applied_background || numasched_companion_in_force() != applied_companion ||
		numasched_state->nodes_shared != applied_nodes_shared)
		apply_memory_policy(node, slot->background);
	if (node == settled_node || !slot->bound)
		return;
	if (settled_node < 0)
	{
		/* the first time, once it has shown it lives (its own slot: no lock) */
		if (slot->kind == NUMASCHED_PARALLEL_WORKER ||
			GetCurrentStatementStartTimestamp() >= slot->placed_at + NUMASCHED_SETTLE_AFTER_MS * INT64CONST(1000))
			settle_memory_in_turn(node, slot->kind == NUMASCHED_BACKEND);
	}
	/* moved to another node: what it had stays behind unless it follows */
	else if (numasched_migrate_memory)
		settle_memory_in_turn(node, true);
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
