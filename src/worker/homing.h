/*
 * homing.h - processes the kernel ran on another node brought home when a
 * CPU of theirs idles (numasched.node_binding = preferred)
 */
#ifndef NUMASCHED_WORKER_HOMING_H
#define NUMASCHED_WORKER_HOMING_H

#include "postgres.h"

extern void numasched_homing_start(void);

/*
 * One look, at the scheduler's discovery interval; true while a process
 * was found away from its home CPUs at this look, so that the scheduler
 * does not doze through the next.
 */
extern bool numasched_homing_tick(void);

#endif							/* NUMASCHED_WORKER_HOMING_H */
