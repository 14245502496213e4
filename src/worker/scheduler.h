/*
 * scheduler.h - the scheduler worker
 */
#ifndef NUMASCHED_WORKER_SCHEDULER_H
#define NUMASCHED_WORKER_SCHEDULER_H

#include "postgres.h"

/* The scheduler worker's entry point (scheduler.c). */
extern PGDLLEXPORT void numasched_scheduler_main(Datum arg);

#endif							/* NUMASCHED_WORKER_SCHEDULER_H */
