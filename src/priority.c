/*
 * priority.c - background CPU priority given and taken back: SCHED_IDLE, and
 * nice 19 for the process's autogroup (ns_priority.h says why both)
 *
 * The autogroup's nice may be changed only ten times a second on the whole
 * machine; a change refused for that is left to the scheduler, which tries
 * again every 100 ms (inversion.c).
 */
#include "postgres.h"

#include <errno.h>

#include "numasched.h"

bool
numasched_set_priority(pid_t pid, bool background, bool *autogroup_pending, char *err, size_t errlen)
{
	*autogroup_pending = false;
	if (!ns_set_background(pid, background, err, errlen))
		return false;
	/* no autogroup (a kernel without them, or no /proc) is no failure */
	*autogroup_pending = !ns_set_autogroup_nice(pid, background ? NS_BACKGROUND_NICE : 0) &&
		errno == EAGAIN;
	return true;
}
