/*
 * lending.h - idle CPUs lent to groups whose work waits: the scheduler's ticks
 */
#ifndef NUMASCHED_WORKER_LENDING_H
#define NUMASCHED_WORKER_LENDING_H

#include "postgres.h"

extern void numasched_lend_start(void);
/* Gives back everything lent. */
extern void numasched_end_lending(void);
/* A tick when one is due; the ms until the next, or -1: no lending now. */
extern long numasched_lend_tick(void);
/* Nothing lent, no wait of ours in the last second, no read going on. */
extern bool numasched_lend_quiet(void);
/* A statement woke the dozing scheduler: read at once, and at every tick for a while. */
extern void numasched_lend_wake(void);

#endif							/* NUMASCHED_WORKER_LENDING_H */
