/*
 * priority.c - background CPU priority given and taken back: the idle cpu
 * cgroup where the server may change its own, else nice 19 for the
 * process's autogroup where autogroups share the CPU, else SCHED_IDLE
 * (numasched_background_way; ns_cgroup.h and ns_priority.h say why)
 *
 * The autogroup's nice may be changed only ten times a second on the whole
 * machine; a change refused for that is left to the scheduler, which tries
 * again every 100 ms (inversion.c).
 */
#include "postgres.h"

#include <errno.h>

#include "backend/priority.h"
#include "backend/state.h"

bool
numasched_set_priority(pid_t pid, bool background, bool *autogroup_pending, char *err, size_t errlen)
{
	*autogroup_pending = false;
	/* the companion's tier: a SCHED_EXT process may not be SCHED_IDLE too */
	if (numasched_companion_in_force())
		return ns_set_own_nice(pid, background ? NS_BACKGROUND_NICE : 0, err, errlen);
	if (numasched_background_way == PRIORITY_BY_CGROUP)
		return ns_cgroup_move(pid, background ? numasched_cgroup_dirs->background : numasched_cgroup_dirs->normal,
							  err, errlen);
	if (numasched_background_way == PRIORITY_BY_SCHED_IDLE)
		return ns_set_background(pid, background, err, errlen);
	if (ns_set_autogroup_nice(pid, background ? NS_BACKGROUND_NICE : 0))
		return true;
	if (errno == EAGAIN)
	{
		*autogroup_pending = true;
		return true;
	}
	snprintf(err, errlen, "writing /proc/%d/autogroup failed: %s", (int) (pid ? pid : getpid()), strerror(errno));
	return false;
}

int
numasched_is_background(pid_t pid)
{
	int			nice;

	if (numasched_companion_in_force())
	{
		nice = ns_own_nice(pid);
		return nice < -20 ? -1 : nice > 0;
	}
	if (numasched_background_way == PRIORITY_BY_CGROUP)
		return ns_cgroup_in(pid, numasched_cgroup_dirs->background);
	if (numasched_background_way == PRIORITY_BY_SCHED_IDLE)
		return ns_is_background(pid);
	nice = ns_autogroup_nice(pid);
	return nice < -20 ? -1 : nice > 0;
}
