/*
 * schedstat.h - what each placed process ran and waited, in ns, per slot
 */
#ifndef NUMASCHED_WORKER_SCHEDSTAT_H
#define NUMASCHED_WORKER_SCHEDSTAT_H

#include "postgres.h"

extern void numasched_schedstat_init(void);
extern bool numasched_read_schedstat(int slot, pid_t pid, uint64 *ran_ns, uint64 *waited_ns);
/* Closes the files of processes that left their slots. */
extern void numasched_schedstat_forget_gone(void);

#endif							/* NUMASCHED_WORKER_SCHEDSTAT_H */
