/*
 * parallel_cap.c - a background session's query plans no more parallel
 * workers than the CPUs of its reach beside its leader's
 *
 * Under the kernel's fair class each background process is an entity of its
 * own (SCHED_IDLE, or its autogroup at nice 19) with a tiny weight.  When two
 * share a CPU, the one that waits is owed the other's run in virtual time,
 * hundreds of times its real length; EEVDF then finds its deadline earlier
 * than that of a normal process that just woke, picks it, and the normal
 * process waits until the next tick (doc/benchmarking.md, "Where the OLTP
 * role waits").  More processes than CPUs add no CPU time to the query, only
 * those waits, and each worker's start-up, which runs at normal priority
 * until it places itself at its executor start.
 *
 * Not under the sched_ext companion: it runs background work only where no
 * normal work waits, however many processes it has.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/plancache.h"

#include "backend/parallel_cap.h"
#include "backend/state.h"

/*
 * This process is placed at background priority, as its slot says: kept
 * here, where only it changes it, so that a normal one's plans pay one test.
 */
bool		numasched_plans_capped = false;

/*
 * The CPUs this process may run on, read from the kernel at most once a
 * second of statements (a system call costs about a microsecond here, a
 * small plan tens) and at once after its own priority changed; the
 * scheduler may narrow them meanwhile (CPUs set aside, a move).
 */
static int	reach_cpus = -1;
static TimestampTz reach_read_at;

int
numasched_background_workers_cap(void)
{
	TimestampTz now;

	if (!numasched_plans_capped || numasched_companion_in_force())
		return -1;
	/* the kernel's answer: a background process may run on all of its reach */
	now = GetCurrentStatementStartTimestamp();
	if (reach_cpus <= 0 || now - reach_read_at >= USECS_PER_SEC)
	{
		reach_cpus = ns_allowed_cpu_count(0);
		reach_read_at = now;
	}
	return reach_cpus > 0 ? reach_cpus - 1 : -1;
}

void
numasched_background_changed(bool background)
{
	reach_cpus = -1;
	if (numasched_plans_capped == background)
		return;
	numasched_plans_capped = background;
	/* its cached plans were made for the other priority */
	ResetPlanCache();
}
