/*
 * doorbell.c - the scheduler dozes while nothing runs, and a statement wakes it
 *
 * A wake costs more than anything the scheduler does when nothing runs (40-60
 * us of CPU in a VM, for a bare timer wake: 0.1% of a core at 20 a second),
 * so once no statement has started for a second, nothing is lent and no
 * background process may need raising, it sleeps until its next pass.  Every
 * statement, and every parallel worker's part of one, starts with a look at
 * the doorbell (numasched_ring_scheduler: one read of a line that changes at
 * most once a tick); the first to find the scheduler dozing wakes it through
 * its latch, and lending starts reading at once (numasched_lend_wake).
 *
 * Work that starts to wait in the middle of a long statement, with no
 * statement starting anywhere, is seen at the next pass instead of within 60
 * ms.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"

#include "worker/doorbell.h"
#include "backend/state.h"

void
numasched_doorbell_start(void)
{
	numasched_state->scheduler_latch = MyLatch;
	pg_write_barrier();
	pg_atomic_write_u32(&numasched_state->doorbell.state, NUMASCHED_DOORBELL_QUIET);
}

void
numasched_wake_scheduler(void)
{
	Latch	   *latch = numasched_state->scheduler_latch;

	/* a stale latch (a scheduler since restarted) costs one spurious wake */
	if (latch != NULL)
		SetLatch(latch);
}

bool
numasched_doorbell_answer(void)
{
	pg_atomic_uint32 *bell = &numasched_state->doorbell.state;

	/* written only when it changes: every statement reads this line */
	if (pg_atomic_read_u32(bell) == NUMASCHED_DOORBELL_QUIET)
		return false;
	return pg_atomic_exchange_u32(bell, NUMASCHED_DOORBELL_QUIET) == NUMASCHED_DOORBELL_RUNG;
}

bool
numasched_doorbell_doze(void)
{
	uint32		quiet = NUMASCHED_DOORBELL_QUIET;

	/* a statement that started since the last answer keeps it awake */
	return pg_atomic_compare_exchange_u32(&numasched_state->doorbell.state, &quiet,
										  NUMASCHED_DOORBELL_DOZING);
}
