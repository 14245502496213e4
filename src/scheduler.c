/*
 * scheduler.c - the "numasched scheduler" background worker
 *
 * Parallel workers of CREATE INDEX and VACUUM never enter the executor, so
 * they cannot place themselves: the scheduler finds them through the lock
 * group (every parallel worker is a member of its leader's) and places them
 * from outside.  It also forgets the slots of such processes once they are
 * gone (processes that placed themselves give their slot back on exit).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/guc.h"

#include "numasched.h"

/* how often to look for parallel workers that are not placed yet */
#define DISCOVERY_INTERVAL_MS 100

static void
place_lock_group_members(void)
{
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		PGPROC	   *leader = proc->lockGroupLeader;

		/*
		 * Unlocked peeks; numasched_place checks the slot again under its
		 * lock.  An exited worker leaves its lock group, but its PGPROC
		 * keeps the pid: only a process in the proc array is placed.
		 */
		if (proc->pid == 0 || leader == NULL || leader == proc ||
			numasched_slots[i].pid == proc->pid ||
			BackendPidGetProc(proc->pid) != proc)
			continue;
		numasched_place(proc, NUMASCHED_PARALLEL_WORKER, leader);
	}
}

void
numasched_scheduler_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (numasched_machine == NULL)
	{
		ereport(LOG, (errmsg("numasched scheduler has no topology and exits")));
		proc_exit(0);
	}

	while (!ShutdownRequestPending)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 DISCOVERY_INTERVAL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (numasched_enabled)
			place_lock_group_members();
		numasched_forget_gone();
	}
	proc_exit(0);
}
