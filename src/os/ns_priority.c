/*
 * ns_priority.c - background CPU priority through sched_setscheduler and
 * the autogroup's nice value (see ns_priority.h)
 *
 * SCHED_IDLE, not nice 19: a normal task that wakes on its CPU preempts a
 * SCHED_IDLE task (if EEVDF finds the normal task eligible; else it waits
 * for the next tick: doc/reference.md), and the kernel counts a CPU that
 * runs only SCHED_IDLE tasks as idle when it places a waking task, so normal
 * work finds it.  Its own nice value is left alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os/ns_priority.h"
#include "os/ns_cgroup.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* CAP_SYS_NICE, linux/capability.h */
#define NS_CAP_SYS_NICE 23

bool
ns_set_background(pid_t pid, bool background, char *err, size_t errlen)
{
	struct sched_param param = {0};

	if (sched_setscheduler(pid, background ? SCHED_IDLE : SCHED_OTHER, &param) == 0)
		return true;
	snprintf(err, errlen, "sched_setscheduler(%s) failed: %s",
			 background ? "SCHED_IDLE" : "SCHED_OTHER", strerror(errno));
	return false;
}

bool
ns_set_autogroup_nice(pid_t pid, int nice)
{
	char		path[64];
	FILE	   *f;
	bool		ok;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/autogroup");
	else
		snprintf(path, sizeof(path), "/proc/%d/autogroup", (int) pid);
	if ((f = fopen(path, "w")) == NULL)
		return false;
	ok = fprintf(f, "%d\n", nice) > 0;
	ok = (fclose(f) == 0) && ok;	/* the kernel answers at the write, flushed here */
	return ok;
}

int
ns_is_background(pid_t pid)
{
	int			policy = sched_getscheduler(pid);

	return policy < 0 ? -1 : (policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLE;
}

/* Whether CAP_SYS_NICE is in the caller's effective set (/proc/self/status). */
static bool
has_cap_sys_nice(void)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	bool		has = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "CapEff:", 7) == 0)
		{
			has = (strtoull(line + 7, NULL, 16) >> NS_CAP_SYS_NICE) & 1;
			break;
		}
	fclose(f);
	return has;
}

bool
ns_may_raise_priority(char *why, size_t whylen)
{
	struct rlimit limit = {0, 0};
	int			nice_now;
	rlim_t		needed;

	/*
	 * Leaving SCHED_IDLE is allowed where the nice value the process keeps
	 * may be set: RLIMIT_NICE counts 20 - nice, so nice 0 needs 20.
	 */
	errno = 0;
	nice_now = getpriority(PRIO_PROCESS, 0);
	if (errno != 0)
		nice_now = 0;
	needed = 20 - nice_now;
	if (getrlimit(RLIMIT_NICE, &limit) == 0 &&
		(limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed))
		return true;
	if (has_cap_sys_nice())
		return true;
	snprintf(why, whylen, "RLIMIT_NICE is %llu, %llu would allow nice %d back, and CAP_SYS_NICE is not held",
			 (unsigned long long) limit.rlim_cur, (unsigned long long) needed, nice_now);
	return false;
}

bool
ns_autogroups_apply(void)
{
	FILE	   *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
	char		comm[32] = "";
	char		mine[4096],
				kthreadd[4096];
	int			enabled = 0;
	bool		v1;

	if (f == NULL)
		return false;			/* a kernel without autogroups */
	if (fscanf(f, "%d", &enabled) != 1)
		enabled = 0;
	fclose(f);
	if (!enabled || (f = fopen("/proc/2/comm", "r")) == NULL)
		return false;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	if (strcmp(comm, "kthreadd\n") != 0)
		return false;			/* another pid namespace: a container */
	ns_cpu_cgroup("self", mine, sizeof(mine), &v1);
	ns_cpu_cgroup("2", kthreadd, sizeof(kthreadd), &v1);
	if (mine[0] == '\0' || strcmp(mine, kthreadd) == 0)
		return mine[0] != '\0';
	if (v1)
		return false;
	/* cgroup v2 below the root: in the root's cpu group unless the root hands cpu down */
	if ((f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "r")) == NULL)
		return true;
	while (fscanf(f, "%31s", comm) == 1)
		if (strcmp(comm, "cpu") == 0)
		{
			fclose(f);
			return false;
		}
	fclose(f);
	return true;
}

int
ns_autogroup_nice(pid_t pid)
{
	char		path[64];
	FILE	   *f;
	int			nice = -100;

	snprintf(path, sizeof(path), "/proc/%d/autogroup", (int) (pid ? pid : getpid()));
	if ((f = fopen(path, "r")) == NULL)
		return -100;
	if (fscanf(f, "%*s nice %d", &nice) != 1)
		nice = -100;
	fclose(f);
	return nice;
}
