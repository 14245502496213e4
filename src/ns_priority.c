/*
 * ns_priority.c - background CPU priority through sched_setscheduler and
 * the autogroup's nice value (see ns_priority.h)
 *
 * SCHED_IDLE, not nice 19: a SCHED_IDLE task is preempted as soon as a
 * normal task wakes on its CPU, and the kernel counts a CPU that runs only
 * SCHED_IDLE tasks as idle when it places a waking task, so normal work
 * finds it at once.  Its own nice value is left alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ns_priority.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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

/* Whether "word" is one of the comma-separated items of list[0..len). */
static bool
in_comma_list(const char *list, size_t len, const char *word)
{
	size_t		wlen = strlen(word);

	for (size_t i = 0; i < len;)
	{
		size_t		j = i;

		while (j < len && list[j] != ',')
			j++;
		if (j - i == wlen && strncmp(list + i, word, wlen) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

bool
ns_autogroups_apply(void)
{
	FILE	   *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
	char		line[4096];
	int			enabled = 0;
	bool		v1_cpu = false,
				in_root = false;

	if (f == NULL)
		return false;			/* a kernel without autogroups */
	if (fscanf(f, "%d", &enabled) != 1)
		enabled = 0;
	fclose(f);
	if (!enabled || (f = fopen("/proc/self/cgroup", "r")) == NULL)
		return false;
	/* "id:controllers:path"; cgroup v2 is "0::path" */
	while (fgets(line, sizeof(line), f))
	{
		char	   *c = strchr(line, ':'),
				   *p = c ? strchr(c + 1, ':') : NULL;
		bool		root_path;

		if (p == NULL)
			continue;
		root_path = strcmp(p + 1, "/\n") == 0 || strcmp(p + 1, "/") == 0;
		if (in_comma_list(c + 1, p - c - 1, "cpu"))
		{
			v1_cpu = true;
			in_root = root_path;
			break;
		}
		if (p == c + 1)
			in_root = root_path;
	}
	fclose(f);
	if (!v1_cpu && !in_root)
	{
		/* v2 below the root: its own cpu group only if the root hands cpu down */
		FILE	   *control = fopen("/sys/fs/cgroup/cgroup.subtree_control", "r");
		size_t		n = 0;

		if (control)
		{
			n = fread(line, 1, sizeof(line) - 1, control);
			fclose(control);
		}
		line[n] = '\0';
		for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n"))
			if (strcmp(t, "cpu") == 0)
				return false;
		return true;
	}
	return in_root;
}
