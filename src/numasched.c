/*
 * numasched.c - PostgreSQL glue: module load and hooks
 *
 * Reads the machine and defines the settings (settings.c), asks for shared
 * memory, and places processes (state.c) from PostgreSQL's hooks: a client
 * backend once it has authenticated, a parallel worker when it starts its
 * part of a query.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "libpq/auth.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "replication/walsender.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "numasched.h"

NUMASCHED_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ClientAuthentication_hook_type prev_client_authentication_hook = NULL;
static ExecutorStart_hook_type prev_executor_start_hook = NULL;

static void
numasched_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(numasched_shmem_size());
	RequestNamedLWLockTranche("numasched", 1);
	/* the segment is created and initialised next */
	if (!IsUnderPostmaster && numasched_shared_memory == SHARED_MEMORY_INTERLEAVE)
		numasched_interleave_initialisation();
}

static void
numasched_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	numasched_shmem_attach();
	/* at server start and after a crash restart, the segment is new */
	if (!IsUnderPostmaster && numasched_shared_memory == SHARED_MEMORY_INTERLEAVE)
		numasched_interleave_shared_memory();
	else if (!IsUnderPostmaster)
		numasched_guard_huge_page_segment();
}

/* A client backend is placed once it has authenticated. */
static void
numasched_client_authentication(Port *port, int status)
{
	if (prev_client_authentication_hook)
		prev_client_authentication_hook(port, status);
	if (status == STATUS_OK && !am_walsender)
		numasched_place(MyProc, NUMASCHED_BACKEND, NULL);
}

/*
 * A parallel worker of a query places itself when it starts its part, next
 * to its leader (found through the lock group).  A backend that was moved
 * adopts the memory policy of its new node here, at its next statement.
 */
static void
numasched_executor_start(QueryDesc *queryDesc, int eflags)
{
	static bool worker_placed = false;

	if (numasched_state != NULL)
	{
		if (IsParallelWorker() && !worker_placed && MyProc->lockGroupLeader != NULL &&
			MyProc->lockGroupLeader != MyProc)
		{
			worker_placed = true;
			numasched_place(MyProc, NUMASCHED_PARALLEL_WORKER, MyProc->lockGroupLeader);
		}
		numasched_follow_slot();
	}
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
register_scheduler(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	/* a connection to no database makes it visible in pg_stat_activity */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 2;
	strlcpy(worker.bgw_library_name, "numasched", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "numasched_scheduler_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "numasched scheduler", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "numasched scheduler", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

void
_PG_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		numasched_load_machine();

	numasched_define_settings();


	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = numasched_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = numasched_shmem_startup;
	prev_client_authentication_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = numasched_client_authentication;
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = numasched_executor_start;
	register_scheduler();
}
