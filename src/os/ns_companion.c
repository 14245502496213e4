/*
 * ns_companion.c - the sched_ext companion seen from a process (see
 * ns_companion.h)
 */
#include "os/ns_companion.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

bool
ns_companion_loaded(const char *sysfs_root)
{
	char		path[512];
	char		name[64] = "";
	FILE	   *f;
	bool		ours;

	snprintf(path, sizeof(path), "%s/kernel/sched_ext/root/ops", sysfs_root);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	ours = fgets(name, sizeof(name), f) != NULL &&
		strcmp(name, NS_COMPANION_NAME "\n") == 0;
	fclose(f);
	return ours;
}

bool
ns_set_sched_ext(pid_t pid, bool on, char *err, size_t errlen)
{
	struct sched_param param = {0};

	/* sched_setscheduler keeps the nice value of a fair (or ext) policy */
	if (sched_setscheduler(pid, on ? NS_SCHED_EXT : SCHED_OTHER, &param) == 0)
		return true;
	snprintf(err, errlen, "sched_setscheduler(%s) failed: %s",
			 on ? "SCHED_EXT" : "SCHED_OTHER", strerror(errno));
	return false;
}

int
ns_is_sched_ext(pid_t pid)
{
	int			policy = sched_getscheduler(pid);

	return policy < 0 ? -1 : (policy & ~SCHED_RESET_ON_FORK) == NS_SCHED_EXT;
}

bool
ns_set_own_nice(pid_t pid, int nice, char *err, size_t errlen)
{
	if (setpriority(PRIO_PROCESS, (id_t) pid, nice) == 0)
		return true;
	snprintf(err, errlen, "setpriority(%d) failed: %s", nice, strerror(errno));
	return false;
}

int
ns_own_nice(pid_t pid)
{
	int			nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t) pid);
	return errno ? -100 : nice;
}
