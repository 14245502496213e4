/*
 * placement.c - placing a process in a CPU group and binding it there:
 * a backend or parallel worker placing itself, the scheduler placing one
 * from outside, a move into a new workload class, numasched_move, and the
 * slot given back at exit
 *
 * Each is one flow: what the process gets is decided under the lock by code
 * with no side effect, written in the books, told to the kernel once the
 * lock is released (binding.c), and what the kernel refused is put back in
 * the books and said once.  Nothing here raises an ERROR while placing:
 * numasched must never turn a working connection into a failing one.  A
 * process that cannot be bound runs unbound, with a WARNING once per process
 * and a counter.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/procarray.h"

#include "backend/placement.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/classes.h"
#include "backend/memory.h"
#include "backend/parallel_cap.h"
#include "backend/priority.h"
#include "backend/regroup.h"
#include "backend/report.h"
#include "backend/state.h"
#include "os/ns_os.h"

/* this process's own placement */
static bool exit_callback_registered = false;

/* this process left numasched in the background, and is not at normal priority yet */
static bool normal_priority_pending = false;

void
numasched_forget_slot_locked(numasched_slot *slot)
{
	if (slot->group >= 0 && slot->group < numasched_state->ngroups)
		ns_loads_add(numasched_shared_plan(), numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
	numasched_drop_class_locked(slot->class_id);
	slot->class_id = -1;
	slot->pid = 0;
	slot->group = -1;
	slot->lent_group = -1;
	slot->visit_group = -1;
	if (slot->aside)
	{
		/* the CPUs set aside are worked out again at the next guard tick */
		numasched_state->set_aside_changed = true;
		slot->aside = false;
	}
	numasched_mark_slot(slot, false);
}

/*
 * At exit: its decisions an ERROR left untold given up, its slot given
 * back, and its pid told nothing more.
 */
static void
release_own_slot(int code, Datum arg)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];

	numasched_abandon_tellings(code, arg);
	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	if (slot->pid == MyProcPid)
		numasched_forget_slot_locked(slot);
	LWLockRelease(numasched_state->lock);
	numasched_wait_for_tellings(slot);
}

/* What placing a process asks for: who it is, and the settings it runs with. */
typedef struct placement_ask
{
	PGPROC	   *proc;
	pid_t		pid;
	bool		self;			/* the process places itself */
	numasched_kind kind;
	PGPROC	   *leader;
	ns_settings settings;
	ns_request	request;
	int			class_id;
	int			parallel_mode;
	bool		background;
} placement_ask;

/* What it gets: decided under the lock, with no side effect. */
typedef struct placement_decision
{
	ns_placement where;
	ns_cpuset	cpus;			/* its group's */
	ns_cpuset	kernel_cpus;	/* what the kernel is told: with a lender's, or its reach */
	int			lender;			/* a group lending its group CPUs now; -1: none */
	int			tier;			/* the number of its tier's telling; -1: none */
	int			binding;		/* the number of its CPUs' telling; -1: none */
} placement_decision;

/*
 * Whether "slot" is free for the process: not placed already, and, placing
 * another process, its PGPROC still its own (it was looked at without a
 * lock, and a worker's PGPROC goes back to a free list at its exit).
 */
static bool
slot_free_for_locked(const placement_ask *ask, const numasched_slot *slot)
{
	PGPROC	   *proc = ask->proc;

	if (slot->pid == ask->pid)
		return false;
	return ask->self || (proc->pid == ask->pid && proc->lockGroupLeader == ask->leader &&
						 BackendPidGetProc(ask->pid) == proc);
}

/*
 * The workload class the process is placed in, one more slot in it, and
 * for a parallel worker its leader's group; false when its leader is not
 * placed (numasched.enabled is off for its role, or it is no client
 * backend: a walsender, a background worker running queries).
 */
static bool
take_class_locked(placement_ask *ask)
{
	if (ask->leader)
	{
		numasched_slot *lslot = &numasched_slots[numasched_procno(ask->leader)];

		if (lslot->pid != ask->leader->pid || lslot->group < 0)
			return false;
		ask->request.leader_group = lslot->group;

		/*
		 * Placed from outside, a worker joins its leader's class and follows
		 * its leader's parallel_placement, which the scheduler cannot read.
		 */
		if (!ask->self)
		{
			ask->background = lslot->background;
			ask->parallel_mode = lslot->parallel_mode;
			ask->settings.parallel = ask->parallel_mode;
			if (lslot->class_id >= 0)
			{
				ask->class_id = lslot->class_id;
				numasched_classes[ask->class_id].refs++;
			}
		}
	}
	/* placing itself, a process has its own settings (a worker, its leader's) */
	if (ask->self)
		ask->class_id = numasched_take_own_class_locked();
	if (ask->class_id >= 0)
	{
		ask->request.home_groups = &numasched_classes[ask->class_id].home;
		ask->request.reach_groups = &numasched_classes[ask->class_id].reach;
	}
	return true;
}

/* Its group (the core's answer) and the CPUs the kernel is to be told. */
static void
decide_placement_locked(const placement_ask *ask, bool companion, placement_decision *d)
{
	const ns_plan *plan = numasched_shared_plan();

	ns_place(plan, numasched_shared_loads(), &ask->settings, &ask->request, &d->where);
	d->cpus = plan->groups[d->where.group].cpus;
	/* under the companion, every process its reach: it picks among them at every wakeup */
	ns_bound_cpus(plan, &ask->settings, d->where.group, ask->request.home_groups,
				  ask->request.reach_groups, ask->background || companion, &d->kernel_cpus);
	/* a group that borrows idle CPUs now: the newcomer may use them too */
	d->lender = ask->background || companion ? -1 :
		numasched_lender_for_locked(d->where.group, ask->request.reach_groups);
	if (d->lender >= 0)
		ns_cpuset_or(&d->kernel_cpus, &d->kernel_cpus, &plan->groups[d->lender].cpus);
	numasched_keep_off_set_aside(false, &d->kernel_cpus);
	d->tier = -1;
	d->binding = -1;
}

/* The decision written in the books: its slot and its group's load. */
static void
record_placement_locked(numasched_slot *slot, const placement_ask *ask, const placement_decision *d)
{
	if (!ask->background)
		ns_loads_add(numasched_shared_plan(), numasched_shared_loads(), d->where.group, NS_DEFAULT_WEIGHT);
	slot->pid = ask->pid;
	numasched_mark_slot(slot, true);
	slot->leader_pid = ask->leader ? ask->leader->pid : 0;
	slot->kind = ask->kind;
	slot->bound = true;
	slot->self_placed = ask->self;
	slot->keep_node = ask->kind == NUMASCHED_PARALLEL_WORKER && ask->parallel_mode == NS_PARALLEL_COMPACT;
	slot->parallel_mode = ask->parallel_mode;
	slot->class_id = ask->class_id;
	slot->node = d->where.node;
	slot->group = d->where.group;
	slot->weight = NS_DEFAULT_WEIGHT;
	slot->moves = 0;
	slot->moved_pass = 0;
	slot->placed_at = GetCurrentTimestamp();
	slot->cpus = d->cpus;
	slot->lent_group = d->lender;
	slot->visit_group = -1;
	slot->background = ask->background;
	slot->autogroup_pending = ask->self && normal_priority_pending;
	slot->raised = false;
	slot->aside = false;
	/* a group of every usable CPU is the mask it inherited from the postmaster */
	slot->told = numasched_machine->usable;
}

/*
 * What the kernel is to be told, told once the lock is released:
 * background priority (or the companion) before the wider mask, so that it
 * never competes as normal work outside its group; a refusal places it as
 * normal.  Free to run on the CPUs of other groups of its node (or of the
 * nodes in its reach), it starts on its own group's: the kernel wakes a
 * process on or near the CPU it last ran on while one is idle there.  Moving another process would only take
 * effect at its next wakeup, already with the wider mask.
 */
static void
decide_telling_locked(numasched_slot *slot, const placement_ask *ask, bool companion, placement_decision *d)
{
	if (ask->background || companion)
		d->tier = numasched_retier_slot_locked(slot, companion && ask->background, false);
	if (ask->self && !ask->background && !companion && !ns_cpuset_equal(&d->kernel_cpus, &d->cpus))
		(void) numasched_bind_slot_locked(slot, &d->cpus);
	if (!ns_cpuset_equal(&d->kernel_cpus, &slot->told))
		d->binding = numasched_bind_locked(slot, &d->kernel_cpus);
}

/*
 * What the kernel made of it, counted, said once per process and kind of
 * failure, and followed by its memory; with the lock released.
 */
static void
report_placement(const placement_ask *ask, bool companion, const placement_decision *d)
{
	const char *refusal;
	bool		bound = d->binding < 0 || numasched_told(d->binding, &refusal);
	bool		background = ask->background;
	bool		background_refused = false;
	bool		executor_refused = false;
	char		err[NS_ERRLEN] = "";
	char		priority_err[NS_ERRLEN] = "";

	if (!bound)
		strlcpy(err, refusal, sizeof(err));
	if (d->tier >= 0 && !numasched_told(d->tier, &refusal))
	{
		strlcpy(priority_err, refusal, sizeof(priority_err));
		background_refused = background && !companion;
		executor_refused = companion;
		background = background && companion;
	}
	if (ask->self)
		normal_priority_pending = false;	/* the scheduler's now, as any slot's */
	if (ask->self && background)
		numasched_background_changed(true);

	numasched_count(STAT_PLACEMENTS, 1);
	numasched_count(d->where.hops == 0 ? STAT_HOME : d->where.hops == 1 ? STAT_ONE_HOP : STAT_FARTHER, 1);
	if (d->where.hops > 0)
		numasched_count(STAT_STEALS, 1);

	if (!bound)
		numasched_warn_failure(FAILURE_AFFINITY, err,
							   "numasched could not set its CPU affinity, process %d runs unbound", (int) ask->pid);
	if (executor_refused)
		numasched_warn_failure(FAILURE_EXECUTOR, priority_err,
							   "numasched could not put process %d under the sched_ext companion, the kernel's own scheduler runs it", (int) ask->pid);
	else if (background_refused)
		numasched_warn_failure(FAILURE_PRIORITY, priority_err,
							   "numasched could not give process %d background CPU priority, it runs as normal work", (int) ask->pid);
	if (ask->self)
		numasched_memory_placed(d->where.node, ask->kind, bound);

	if (numasched_log_placements)
	{
		char		text[1024];

		ns_cpuset_format(&d->kernel_cpus, text, sizeof(text));
		ereport(LOG,
				(errmsg("numasched placed %s %d on node %d, CPU group %d (CPUs %s)",
						ask->kind == NUMASCHED_BACKEND ? "backend" : "parallel worker", (int) ask->pid,
						numasched_machine->nodes[d->where.node].id, d->where.group, text),
				 errhidestmt(true)));
	}
}

bool
numasched_place(PGPROC *proc, numasched_kind kind, PGPROC *leader)
{
	placement_ask ask = {
		.proc = proc,
		.pid = proc->pid,
		.self = proc == MyProc,
		.kind = kind,
		.leader = leader,
		.request = {kind == NUMASCHED_PARALLEL_WORKER, -1, -1, -1, 0, NULL, NULL, -1},
		.class_id = -1,
		.parallel_mode = numasched_parallel_placement,
		.background = numasched_cpu_priority == CPU_PRIORITY_BACKGROUND,
	};
	placement_decision decision;
	numasched_slot *slot;
	bool		companion;

	if (ask.self)
		numasched_class_changed = false;	/* placed with the settings of now */
	if (!numasched_enabled || numasched_state == NULL || numasched_machine == NULL || ask.pid == 0)
		return false;
	/* before anything is decided: whatever way the process exits, its slot is given back */
	if (ask.self && !exit_callback_registered)
	{
		before_shmem_exit(release_own_slot, 0);
		exit_callback_registered = true;
	}
	numasched_settings(&ask.settings);
	if (ask.self && kind == NUMASCHED_PARALLEL_WORKER)
		ask.request.worker_number = ParallelWorkerNumber;
	/* where loads tie, a backend stays on the node its start-up allocated on */
	else if (ask.self)
		ask.request.running_cpu = ns_running_cpu();

	/* its tier, its group's CPUs, then the wider mask */
	numasched_lock_to_decide(3);
	/* the scheduler moves every slot across when this changes, under the lock */
	companion = numasched_state->companion;
	slot = &numasched_slots[numasched_procno(proc)];

	/*
	 * A parallel worker runs with its leader's settings, which may predate a
	 * reload: it uses the plan in force and never rebuilds it.
	 */
	if ((!(ask.self && IsParallelWorker()) && !numasched_sync_plan()) ||
		numasched_shared_plan()->ngroups == 0 || !slot_free_for_locked(&ask, slot))
	{
		numasched_release();
		return false;
	}
	if (slot->pid != 0)
		numasched_forget_slot_locked(slot);	/* left by a process that is gone */
	if (!take_class_locked(&ask))
	{
		numasched_release();
		return false;
	}
	decide_placement_locked(&ask, companion, &decision);
	record_placement_locked(slot, &ask, &decision);
	decide_telling_locked(slot, &ask, companion, &decision);
	numasched_release();		/* tells the kernel */
	report_placement(&ask, companion, &decision);
	return true;
}

/*
 * Normal priority back for a process that left numasched in the background.
 * Without a slot the scheduler cannot make a change the autogroups' rate
 * limit refused (inversion.c), so the process asks again at its next
 * statement (numasched_reclass), and is given it at once if it is placed
 * again (numasched_place marks its slot's change pending).
 */
static void
leave_background(void)
{
	char		err[NS_ERRLEN];

	normal_priority_pending = false;
	if (numasched_is_background(0) == 1 &&
		!numasched_set_priority(0, false, &normal_priority_pending, err, sizeof(err)))
		ereport(LOG,
				(errmsg("numasched let process %d go at background CPU priority", (int) MyProcPid),
				 errdetail_from_core(err)));
	numasched_class_changed |= normal_priority_pending;
}

/* Gives this process's slot back and the CPUs it had before it was placed. */
static void
unplace_self(void)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(MyProc)];
	char		err[NS_ERRLEN];
	bool		was_background = false;

	LWLockAcquire(numasched_state->lock, LW_EXCLUSIVE);
	if (slot->pid == MyProcPid)
	{
		was_background = slot->background;
		numasched_forget_slot_locked(slot);
	}
	numasched_release();
	/* what the scheduler decided for it meanwhile comes before what it sets back */
	numasched_wait_for_tellings(slot);
	if (was_background)
		numasched_background_changed(false);
	leave_background();
	/* out of the sched_ext companion's hands too, unless the whole server is in them */
	if (!numasched_companion_in_force() && ns_is_sched_ext(0) == 1 && !ns_set_sched_ext(0, false, err, sizeof(err)))
		ereport(LOG,
				(errmsg("numasched let process %d go under the sched_ext companion", (int) MyProcPid),
				 errdetail_from_core(err)));
	if (!ns_bind_cpus(0, &numasched_machine->usable, err, sizeof(err)))
	{
		numasched_count(STAT_BIND_FAILURES, 1);
		numasched_warn_failure(FAILURE_UNBIND, err,
							   "numasched could not give process %d back the CPUs it had before it was placed", (int) MyProcPid);
	}
	numasched_memory_unplaced();
}

/*
 * Its priority in the books, when its new class asks for another, and the
 * kernel's telling of it decided: the telling's number, -1 if none.
 */
static int
retier_for_class_locked(numasched_slot *slot, bool want_background)
{
	const ns_plan *plan = numasched_shared_plan();
	bool		was_background = slot->background;
	bool		was_raised = slot->raised;

	if (want_background == slot->background || slot->group < 0)
		return -1;
	ns_loads_add(plan, numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
	slot->background = want_background;
	slot->raised = false;
	ns_loads_add(plan, numasched_shared_loads(), slot->group, numasched_slot_load(slot));
	/* the priority before the mask: a refusal puts both back */
	return numasched_retier_slot_locked(slot, was_background, was_raised);
}

/*
 * The group its new class puts it in, placed as if new with its own load
 * taken out of where it is; -1 while its group is one of the class's, or
 * where it is spilled already and no group of its own has room.
 */
static int
decide_class_group_locked(numasched_slot *slot, const ns_settings *settings)
{
	const ns_plan *plan = numasched_shared_plan();
	const ns_cpuset *home = numasched_slot_home(slot);
	ns_request	request = {false, -1, -1, -1, 0, home, numasched_slot_reach(slot), -1};
	ns_placement where;

	if (slot->group >= 0 && !(home && !ns_cpuset_test(home, slot->group)))
		return -1;
	if (slot->group >= 0)
		ns_loads_add(plan, numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
	ns_place(plan, numasched_shared_loads(), settings, &request, &where);
	if (slot->group >= 0)
		ns_loads_add(plan, numasched_shared_loads(), slot->group, numasched_slot_load(slot));
	return where.group != slot->group ? where.group : -1;
}

/*
 * Staying in its group, it may still need another mask: its class's other
 * groups of the node (preferred binding), its reach (background, or under
 * the companion), what its group borrows within its new reach.
 */
static void
rebind_in_group_locked(numasched_slot *slot)
{
	ns_cpuset	cpus;

	/* a normal one may share what its group borrows, within its reach */
	slot->lent_group = slot->background ? -1 :
		numasched_lender_for_locked(slot->group, numasched_slot_reach(slot));
	numasched_slot_kernel_cpus(slot, &cpus);
	slot->bound = numasched_bind_slot_locked(slot, &cpus);
}

/* What the kernel refused, said; the plans and the memory follow; with the lock released. */
static void
report_reclass(numasched_slot *slot, bool was_background, bool priority_changed, int tier, int move,
			   int moved_to)
{
	const char *refusal;

	if (tier >= 0 && !numasched_told(tier, &refusal))
		numasched_warn_failure(FAILURE_PRIORITY, refusal,
							   numasched_cpu_priority == CPU_PRIORITY_BACKGROUND ?
							   "numasched could not give process %d background CPU priority, it runs as normal work" :
							   "numasched could not give process %d normal CPU priority back, it stays background",
							   (int) MyProcPid);
	if (move >= 0 && !numasched_told(move, &refusal))
	{
		ereport(WARNING,
				(errmsg("numasched could not move process %d into its CPU groups", (int) MyProcPid),
				 errdetail_from_core(refusal)));
		moved_to = -1;
	}
	/* an unlocked peek at our own slot: the scheduler may raise it, not lower it */
	if (priority_changed && slot->background != was_background)
		numasched_background_changed(slot->background);
	if (moved_to >= 0 && numasched_log_placements)
		ereport(LOG,
				(errmsg("numasched moved process %d into its workload class, CPU group %d",
						(int) MyProcPid, moved_to),
				 errhidestmt(true)));
	numasched_follow_slot();
}

void
numasched_reclass(void)
{
	numasched_slot *slot;
	ns_settings settings;
	bool		want_background = numasched_cpu_priority == CPU_PRIORITY_BACKGROUND;
	bool		was_background;
	bool		priority_changed;
	int			group;
	int			moved_to = -1;
	int			tier;
	int			move = -1;

	numasched_class_changed = false;
	if (numasched_state == NULL || numasched_machine == NULL || MyProc == NULL)
		return;
	slot = &numasched_slots[numasched_procno(MyProc)];
	/* unlocked peeks at our own slot: only we place or release it */
	if (slot->pid != MyProcPid)
	{
		if (numasched_enabled)
			numasched_place(MyProc, NUMASCHED_BACKEND, NULL);
		else if (normal_priority_pending)
			leave_background();
		return;
	}
	if (!numasched_enabled)
	{
		unplace_self();
		return;
	}

	numasched_settings(&settings);
	/* its tier, a move, or a mask in its group */
	numasched_lock_to_decide(3);
	numasched_sync_plan();
	/* the old class first: its entry may be the one the new class needs */
	numasched_drop_class_locked(slot->class_id);
	slot->class_id = numasched_take_own_class_locked();
	slot->parallel_mode = numasched_parallel_placement;
	was_background = slot->background;
	priority_changed = want_background != slot->background && slot->group >= 0;
	tier = retier_for_class_locked(slot, want_background);
	group = decide_class_group_locked(slot, &settings);
	if (group >= 0)
	{
		ns_cpuset	cpus;

		numasched_group_cpus_for(slot, group, &cpus);
		move = numasched_bind_move_locked(slot, group, &cpus);
		if (move >= 0)
			moved_to = group;
	}
	if (moved_to < 0 && slot->group >= 0)
		rebind_in_group_locked(slot);
	numasched_release();		/* tells the kernel */
	report_reclass(slot, was_background, priority_changed, tier, move, moved_to);
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
			numasched_forget_slot_locked(slot);
		LWLockRelease(numasched_state->lock);
	}
}

/*
 * Where a move goes, checked against the plan in force (the groups may have
 * changed since the caller looked): MOVE_DONE with *group, or why not.
 */
static numasched_move_result
decide_move_locked(const numasched_slot *slot, pid_t pid, int node_index, int *group, bool within_class)
{
	const ns_plan *plan = numasched_shared_plan();
	int			first = node_index >= 0 ? plan->node_first_group[node_index] : 0;
	int			count = node_index >= 0 ? plan->node_ngroups[node_index] : 0;
	const ns_cpuset *reach;

	if (count == 0 || (*group >= 0 && (*group < first || *group >= first + count)))
	{
		*group = count == 0 ? -1 : first;
		return count == 0 ? MOVE_BAD_NODE : MOVE_BAD_GROUP;
	}
	if (slot->pid != pid)
		return MOVE_NOT_PLACED;
	/* a class's groups are the superuser's to cross (PGC_SUSET settings) */
	reach = within_class ? numasched_slot_reach(slot) : NULL;
	if (*group < 0)
		*group = ns_least_loaded_group(plan, numasched_shared_loads(), node_index, reach);
	if (*group < 0 || (reach && !ns_cpuset_test(reach, *group)))
		return MOVE_OUTSIDE_CLASS;
	return MOVE_DONE;
}

numasched_move_result
numasched_move_process(PGPROC *proc, pid_t pid, int node_index, int *group, bool within_class)
{
	numasched_slot *slot = &numasched_slots[numasched_procno(proc)];
	numasched_move_result result;
	ns_cpuset	cpus;
	const char *refusal;
	int			move;

	numasched_lock_to_decide(1);
	numasched_sync_plan();
	result = decide_move_locked(slot, pid, node_index, group, within_class);
	if (result != MOVE_DONE)
	{
		numasched_release();
		return result;
	}
	/* taken back if the kernel refuses the CPUs (a background process's: its reach from there) */
	numasched_group_cpus_for(slot, *group, &cpus);
	move = numasched_bind_move_locked(slot, *group, &cpus);
	numasched_release();		/* tells the kernel */
	if (move < 0)
		return MOVE_NOT_PLACED;
	if (!numasched_told(move, &refusal))
	{
		ereport(WARNING,
				(errmsg("could not move process %d", (int) pid),
				 errdetail_from_core(refusal)));
		return MOVE_BIND_FAILED;
	}
	return MOVE_DONE;
}
