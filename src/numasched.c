/*
 * numasched.c - PostgreSQL glue: module load and hooks
 *
 * Reads the machine and defines the settings (settings.c), asks for shared
 * memory, and places processes (state.c) from PostgreSQL's hooks: a client
 * backend at the end of its start-up, a parallel worker when it starts its
 * part of a query.  A client backend whose class settings change (SET,
 * RESET, a reload) moves at its next statement.  A background session plans
 * with fewer parallel workers where it has few CPUs (parallel_cap.c).
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "libpq/auth.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/planner.h"
#include "postmaster/bgworker.h"
#include "replication/walsender.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "backend/binding.h"
#include "backend/memory.h"
#include "backend/parallel_cap.h"
#include "backend/placement.h"
#include "backend/regroup.h"
#include "backend/segment.h"
#include "backend/state.h"
#include "backend/statement_lending.h"
#include "worker/doorbell.h"
#include "worker/scheduler.h"

NUMASCHED_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ClientAuthentication_hook_type prev_client_authentication_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_executor_start_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/* a client backend (not a WAL sender), and whether it waits to be placed */
static bool client_backend = false;
static bool placement_pending = false;

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
	/* new: the plan of the settings at server start */
	if (!numasched_shmem_attach())
	{
		numasched_lock_to_decide(0);
		numasched_sync_plan();
		numasched_release();
	}
	/* at server start and after a crash restart, the segment is new */
	if (!IsUnderPostmaster && numasched_shared_memory == SHARED_MEMORY_INTERLEAVE)
		numasched_interleave_shared_memory();
	else if (!IsUnderPostmaster)
		numasched_guard_segment();
}

/*
 * Places a client backend waiting for it, or moves one whose class settings
 * changed.
 */
static void
place_client_backend(void)
{
	if (placement_pending)
	{
		placement_pending = false;
		numasched_place(MyProc, NUMASCHED_BACKEND, NULL);
	}
	else if (numasched_class_changed)
		numasched_reclass();
}

/*
 * The end of the transaction InitPostgres runs authentication and the
 * per-role and per-database settings in (ALTER ROLE/DATABASE ... SET,
 * applied after authentication): the first moment the session's class is
 * known, before it reads its first query.
 */
static void
numasched_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT && placement_pending)
		place_client_backend();
}

/*
 * A client backend is placed once its settings are complete: not here, where
 * the per-role and per-database settings are not applied yet, but when the
 * start-up transaction commits (or at its first statement, whichever comes
 * first).
 */
static void
numasched_client_authentication(Port *port, int status)
{
	static bool callback_registered = false;

	if (prev_client_authentication_hook)
		prev_client_authentication_hook(port, status);
	if (status != STATUS_OK || am_walsender || numasched_state == NULL)
		return;
	client_backend = true;
	placement_pending = true;
	if (!callback_registered)
	{
		RegisterXactCallback(numasched_xact_callback, NULL);
		callback_registered = true;
	}
}

static PlannedStmt *
plan_next(NUMASCHED_PLANNER_PARAMS)
{
	if (prev_planner_hook)
		return prev_planner_hook(NUMASCHED_PLANNER_ARGS);
	return standard_planner(NUMASCHED_PLANNER_ARGS);
}

/*
 * max_parallel_workers_per_gather lowered to "cap" for the planning only, as
 * PostgreSQL's own code sets a setting for a while: an error on the way puts
 * it back with the (sub)transaction.
 */
static pg_noinline PlannedStmt *
plan_capped(int cap, NUMASCHED_PLANNER_PARAMS)
{
	int			nest_level = NewGUCNestLevel();
	char		value[16];
	PlannedStmt *result;

	snprintf(value, sizeof(value), "%d", cap);
	(void) set_config_option("max_parallel_workers_per_gather", value, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	result = plan_next(NUMASCHED_PLANNER_ARGS);
	AtEOXact_GUC(true, nest_level);
	return result;
}

/*
 * A background session plans with no more parallel workers per Gather than
 * the CPUs of its reach but one (parallel_cap.c); a normal one pays a test.
 */
static PlannedStmt *
numasched_planner(NUMASCHED_PLANNER_PARAMS)
{
	int			cap;

	if (numasched_plans_capped && max_parallel_workers_per_gather > 0 &&
		(cap = numasched_background_workers_cap()) >= 0 && cap < max_parallel_workers_per_gather)
		return plan_capped(cap, NUMASCHED_PLANNER_ARGS);
	return plan_next(NUMASCHED_PLANNER_ARGS);
}

/*
 * Every statement rings the scheduler's doorbell, which wakes it if it dozes.
 * A parallel worker of a query places itself when it starts its part, next
 * to its leader (found through the lock group).  A backend that was moved
 * adopts the memory policy of its new node here, at its next statement.  A
 * statement that would wait a whole statement for its group's CPUs is lent
 * another group's.
 */
static void
numasched_executor_start(QueryDesc *queryDesc, int eflags)
{
	static bool worker_placed = false;

	if (numasched_state != NULL)
	{
		numasched_ring_scheduler();
		if (IsParallelWorker() && !worker_placed && MyProc->lockGroupLeader != NULL &&
			MyProc->lockGroupLeader != MyProc)
		{
			worker_placed = true;
			numasched_place(MyProc, NUMASCHED_PARALLEL_WORKER, MyProc->lockGroupLeader);
		}
		if (client_backend)
			place_client_backend();
		numasched_follow_slot();
		if (numasched_may_count_statements())
			numasched_statement_start(queryDesc);
	}
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * Utility statements too: they ring the doorbell (a CREATE INDEX's workers
 * are placed by the scheduler), may be lent a CPU, a SET of the class moves
 * the session as soon as it is done, and a session running only utility
 * statements is placed.
 */
static void
numasched_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
						  ProcessUtilityContext context, ParamListInfo params,
						  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	bool		was_in_set = numasched_in_set_statement;

	if (numasched_state != NULL)
		numasched_ring_scheduler();
	if (client_backend)
		place_client_backend();
	if (numasched_state != NULL && numasched_may_count_statements())
		numasched_statement_start(pstmt);
	numasched_in_set_statement = IsA(pstmt->utilityStmt, VariableSetStmt);
	PG_TRY();
	{
		if (prev_process_utility_hook)
			prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params,
									  queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
									queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		numasched_in_set_statement = was_in_set;
	}
	PG_END_TRY();
	if (numasched_state != NULL)
		numasched_statement_end(pstmt);
	if (client_backend && numasched_class_changed)
	{
		place_client_backend();
		numasched_follow_slot();
	}
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
	if (process_shared_preload_libraries_in_progress && !IsUnderPostmaster)
	{
		numasched_probe_memory();
		numasched_probe_priority();
	}

	numasched_define_settings();

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = numasched_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = numasched_shmem_startup;
	prev_client_authentication_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = numasched_client_authentication;
	prev_planner_hook = planner_hook;
	planner_hook = numasched_planner;
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = numasched_executor_start;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = numasched_process_utility;
	register_scheduler();
}
