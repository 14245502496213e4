/*
 * priority.h - CPU priority given or taken back
 */
#ifndef NUMASCHED_BACKEND_PRIORITY_H
#define NUMASCHED_BACKEND_PRIORITY_H

#include "postgres.h"

/*
 * Gives process "pid" (0: this one) background priority or normal back;
 * *autogroup_pending when its autogroup's nice could not be set yet (the
 * kernel's rate limit), for the scheduler to try again.
 */
extern bool numasched_set_priority(pid_t pid, bool background, bool *autogroup_pending,
								   char *err, size_t errlen);

/* 1: the kernel runs process "pid" at background priority, 0: not, -1: gone. */
extern int	numasched_is_background(pid_t pid);

#endif							/* NUMASCHED_BACKEND_PRIORITY_H */
