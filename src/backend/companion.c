/*
 * companion.c - the sched_ext companion (numasched-scx) in force or not
 *
 * Under the companion every placed process is SCHED_EXT and bound to the
 * CPUs of its whole reach (its class's groups and those it may spill to,
 * within max_steal_distance): the companion picks among them at every
 * wakeup, home first, from the memory policy numasched keeps on the home
 * node.  Without it, as before: the group's CPUs, lending, SCHED_OTHER or the
 * background way chosen at start.  The scheduler looks every 100 ms and
 * moves every placed process across when the companion comes or goes; a
 * process placed meanwhile takes what the shared flag says.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"

#include "backend/companion.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/state.h"

/*
 * The rest of the server follows too: the postmaster (whose children are
 * born with its policy) and every process with a PGPROC that numasched does
 * not place (checkpointer, WAL writer, autovacuum, background workers, this
 * scheduler).  The kernel ranks its fair class above sched_ext, so one of
 * them left there would run ahead of every backend.  A pid read without a
 * lock may have just exited; the kernel refuses another user's process.
 */
static int
server_follows(bool loaded)
{
	char		err[NS_ERRLEN];
	int			moved = 0;

	if (PostmasterPid > 0 && (loaded || ns_is_sched_ext(PostmasterPid) == 1) &&
		ns_set_sched_ext(PostmasterPid, loaded, err, sizeof(err)))
		moved++;
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
	{
		pid_t		pid = ProcGlobal->allProcs[i].pid;

		if (pid == 0 || (i < (uint32) numasched_state->nslots && numasched_slots[i].pid == pid))
			continue;
		if ((loaded || ns_is_sched_ext(pid) == 1) && ns_set_sched_ext(pid, loaded, err, sizeof(err)))
			moved++;
	}
	return moved;
}

void
numasched_follow_companion(void)
{
	bool		loaded = ns_companion_loaded("/sys");
	int			processes = 0;
	int			others;
	int			refused;
	int			mark;
	const char *err = "";

	if (loaded == numasched_state->companion)
		return;
	numasched_lock_to_decide_for_all();
	numasched_state->companion = loaded;
	mark = numasched_tellings_mark();
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		ns_cpuset	cpus;

		if (slot->group < 0)
			continue;
		processes++;
		slot->lent_group = -1;
		slot->visit_group = -1;
		numasched_slot_kernel_cpus(slot, &cpus);
		/* not bound: gone, or its pid no longer its own */
		if (!(slot->bound = numasched_bind_slot_locked(slot, &cpus)))
			continue;
		/* the companion's tier (a background one marked so first), or the way of the server's start */
		(void) numasched_retier_slot_locked(slot, slot->background, slot->raised);
	}
	numasched_release();
	refused = numasched_refusals_since(mark, &err);
	others = server_follows(loaded);
	ereport(LOG,
			(errmsg(loaded ? "numasched: the sched_ext companion numasched-scx is loaded: %d placed processes and %d other processes of the server run under it"
					: "numasched: the sched_ext companion numasched-scx is gone: %d placed processes are back on their CPU groups, %d other processes of the server with the kernel's scheduler",
					processes, others),
			 refused ? errdetail("%d of them kept their scheduling policy or CPUs: %s", refused, err) : 0,
			 refused && loaded ? errhint("A process at SCHED_IDLE (background, numasched's way without a cgroup or autogroups) may not leave it without CAP_SYS_NICE or RLIMIT_NICE; start numasched-scx before PostgreSQL.") : 0));
}
