/*
 * regroup.h - the plan in force
 */
#ifndef NUMASCHED_BACKEND_REGROUP_H
#define NUMASCHED_BACKEND_REGROUP_H

#include "postgres.h"

/*
 * Makes the shared plan match this process's settings unless they are older
 * than the plan's; lock held exclusively.  Release the lock with
 * numasched_release(), which sends any WARNING found meanwhile.
 */
extern bool numasched_sync_plan(void);

#endif							/* NUMASCHED_BACKEND_REGROUP_H */
