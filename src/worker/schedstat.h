/*
 * schedstat.h - what each placed process ran and waited, in ns, and where
 * it runs, per slot
 */
#ifndef NUMASCHED_WORKER_SCHEDSTAT_H
#define NUMASCHED_WORKER_SCHEDSTAT_H

#include "postgres.h"

extern void numasched_schedstat_init(void);
extern bool numasched_read_schedstat(int slot, pid_t pid, uint64 *ran_ns, uint64 *waited_ns);
/* Whether it runs or waits to (state R), and the CPU it last ran on. */
extern bool numasched_read_where(int slot, pid_t pid, bool *runnable, int *cpu);
/* Closes the files of processes that left their slots. */
extern void numasched_schedstat_forget_gone(void);

#endif							/* NUMASCHED_WORKER_SCHEDSTAT_H */
