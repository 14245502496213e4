/*
 * ns_priority.h - a process's CPU priority: normal (SCHED_OTHER) or
 * background (SCHED_IDLE, or nice 19 for its autogroup)
 *
 * No PostgreSQL header.  The kernel lets any process lower its own priority
 * or that of a process of its user, but raising it back (leaving
 * SCHED_IDLE) needs RLIMIT_NICE to allow nice 0 (a limit of 20, systemd's
 * LimitNICE=+0) or CAP_SYS_NICE; the default limit is 0.
 *
 * Every PostgreSQL child calls setsid(), so with autogroups (Debian's and
 * Ubuntu's kernels, for processes outside any cpu cgroup) each backend is a
 * group of its own, and the kernel shares CPU between groups by the group's
 * nice value alone: SCHED_IDLE then changes little (a raised lock holder at
 * SCHED_IDLE in a group at nice 0 was measured running 3% of a CPU for
 * seconds).  There the autogroup's nice is the lever, and any process may
 * set it from 19 back to 0 (only a negative value needs privilege), at most
 * ten times a second machine-wide.
 */
#ifndef NS_PRIORITY_H
#define NS_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The nice value of background priority: an autogroup's, or under the
 * sched_ext companion the process's own (ns_companion.h).
 */
#define NS_BACKGROUND_NICE 19

/* Gives process "pid" (0: the caller) background priority, or normal back. */
bool		ns_set_background(pid_t pid, bool background, char *err, size_t errlen);

/*
 * Sets the nice value of the autogroup of process "pid" (0: the caller);
 * false (errno EAGAIN) when another change came less than 100 ms ago, or
 * without autogroups.
 */
bool		ns_set_autogroup_nice(pid_t pid, int nice);

/* The nice value of the autogroup of process "pid", or -100 if unknown. */
int			ns_autogroup_nice(pid_t pid);

/*
 * Whether the caller's CPU share is its autogroup's: autogroups enabled and
 * the caller in the root cpu cgroup, the one kernel threads are in (kthreadd,
 * pid 2: in a container's pid namespace there is no such process, and its
 * cgroup namespace would show its own cgroup as the root).
 */
bool		ns_autogroups_apply(void);

/* 1: process "pid" runs at background priority, 0: not, -1: unknown (gone). */
int			ns_is_background(pid_t pid);

/*
 * Whether the caller, and the processes it starts, may give a background
 * process normal priority back; if not, "why" says what is missing.
 */
bool		ns_may_raise_priority(char *why, size_t whylen);

#endif							/* NS_PRIORITY_H */
