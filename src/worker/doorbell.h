/*
 * doorbell.h - the scheduler's doorbell
 */
#ifndef NUMASCHED_WORKER_DOORBELL_H
#define NUMASCHED_WORKER_DOORBELL_H

#include "backend/state.h"

/* The scheduler's: its latch is the doorbell's, no statement seen yet. */
extern void numasched_doorbell_start(void);
/* Whether a statement started since the last answer. */
extern bool numasched_doorbell_answer(void);
/* Dozes unless a statement started since the last answer: true if so. */
extern bool numasched_doorbell_doze(void);
extern void numasched_wake_scheduler(void);

/*
 * At every statement's start: the first to find the scheduler dozing wakes
 * it.  One read when the bell was rung already this tick.
 */
static inline void
numasched_ring_scheduler(void)
{
	pg_atomic_uint32 *bell = &numasched_state->doorbell.state;

	if (pg_atomic_read_u32(bell) != NUMASCHED_DOORBELL_RUNG &&
		pg_atomic_exchange_u32(bell, NUMASCHED_DOORBELL_RUNG) == NUMASCHED_DOORBELL_DOZING)
		numasched_wake_scheduler();
}

#endif							/* NUMASCHED_WORKER_DOORBELL_H */
