/*
 * parallel_cap.h - the parallel workers of a background session's plans
 */
#ifndef NUMASCHED_BACKEND_PARALLEL_CAP_H
#define NUMASCHED_BACKEND_PARALLEL_CAP_H

#include "postgres.h"

/*
 * The most parallel workers a Gather of this process's next plan may have:
 * the CPUs of its reach but one, when it runs at background priority; -1: no
 * cap.
 */
extern int	numasched_background_workers_cap(void);

/*
 * This process runs at background priority now, or not (its priority
 * changed, or it left numasched): its plans are capped, or not, and those it
 * cached are made again.
 */
extern void numasched_background_changed(bool background);

/* Whether this process's plans are capped: a test the planner hook makes first. */
extern bool numasched_plans_capped;

#endif							/* NUMASCHED_BACKEND_PARALLEL_CAP_H */
