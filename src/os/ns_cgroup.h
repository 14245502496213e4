/*
 * ns_cgroup.h - background CPU priority through a cpu cgroup of the
 * server's own: a child "numasched-background" with cpu.idle = 1 (ns_cgroup.c)
 *
 * No PostgreSQL header.  A cgroup whose cpu.idle is 1 is to its siblings
 * what a SCHED_IDLE task is to other tasks: it runs where they leave a CPU
 * idle, and a sibling that wakes preempts it at once (kernel 5.15 and
 * later).  Unlike SCHED_IDLE, a process of the cgroup's owner may leave it
 * again, as often as it likes, with no privilege: by writing its pid into
 * another cgroup's cgroup.procs.  This needs a cgroup the server's user may
 * write: systemd's Delegate=yes for its unit (cgroup v2), or a directory of
 * the v1 cpu hierarchy given to it.  Processes in a cgroup below the root
 * have no autogroups, so their nice values and policies count among
 * themselves.
 */
#ifndef NS_CGROUP_H
#define NS_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct ns_cgroup_dirs
{
	char		normal[PATH_MAX];	/* where normal processes are */
	char		background[PATH_MAX];	/* cpu.idle = 1 */
} ns_cgroup_dirs;

/*
 * The cgroup path (as in /proc/PID/cgroup) of process "pid" ("self", "2")
 * in the hierarchy that has the cpu controller (cgroup v1), else in cgroup
 * v2; *v1 says which.  "" if none.
 */
void		ns_cpu_cgroup(const char *pid, char *out, size_t outlen, bool *v1);

/*
 * Makes the caller's cpu cgroup ready for background priority: its child
 * numasched-background with cpu.idle = 1, and where normal processes go.
 * With cgroup v2, whose cgroups with children hold no process, the
 * caller's cgroup's processes move to its child numasched-normal first,
 * and the cpu controller is turned on for the two.  False, with why, where
 * the cgroup is not the caller's to change (the root, or not delegated) or
 * the kernel has no cpu.idle.
 */
bool		ns_cgroup_prepare(ns_cgroup_dirs *dirs, char *err, size_t errlen);

/* Moves process "pid" (0: the caller) into the cgroup directory "dir". */
bool		ns_cgroup_move(pid_t pid, const char *dir, char *err, size_t errlen);

/* 1: process "pid" is in the cgroup directory "dir", 0: not, -1: unknown. */
int			ns_cgroup_in(pid_t pid, const char *dir);

#endif							/* NS_CGROUP_H */
