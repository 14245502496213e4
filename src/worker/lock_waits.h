/*
 * lock_waits.h - which background processes block normal ones
 */
#ifndef NUMASCHED_WORKER_LOCK_WAITS_H
#define NUMASCHED_WORKER_LOCK_WAITS_H

#include "postgres.h"

/*
 * Sets blocks_normal[slot] for each background placed process that holds a
 * heavyweight lock a normal placed process waits for, directly or along a
 * chain of waits (lock_waits.c); returns how many it set.  One look at the
 * lock table, in the caller's memory context.
 */
extern int	numasched_mark_background_blockers(bool *blocks_normal);

#endif							/* NUMASCHED_WORKER_LOCK_WAITS_H */
