/*
 * companion.h - every placed process moved across when the sched_ext companion comes or goes
 */
#ifndef NUMASCHED_BACKEND_COMPANION_H
#define NUMASCHED_BACKEND_COMPANION_H

#include "postgres.h"

/* The companion loaded or unloaded since the last look: every placed process follows. */
extern void numasched_follow_companion(void);

#endif							/* NUMASCHED_BACKEND_COMPANION_H */
