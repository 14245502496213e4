/*
 * homing.h - processes the kernel ran on another node brought home when a
 * CPU of theirs idles (numasched.node_binding = preferred)
 */
#ifndef NUMASCHED_WORKER_HOMING_H
#define NUMASCHED_WORKER_HOMING_H

#include "postgres.h"

extern void numasched_homing_start(void);

/*
 * A look, if one is due: the milliseconds until the next (-1: none while
 * the nodes do not share their CPUs); "away_seen" says whether a process
 * was found away from its home CPUs, so that the scheduler does not doze
 * through the next.
 */
extern long numasched_homing_tick(bool *away_seen);

#endif							/* NUMASCHED_WORKER_HOMING_H */
