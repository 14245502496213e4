/*
 * ns_companion.h - the sched_ext companion (numasched-scx) as a process
 * sees it: whether it is the kernel's sched_ext scheduler now, and a
 * process's entry into it
 *
 * No PostgreSQL header.  Any process may switch itself, or a process of its
 * user, to SCHED_EXT and back to SCHED_OTHER without privilege (policy 7
 * with no sched_ext scheduler loaded runs in the kernel's fair class); only
 * leaving SCHED_IDLE needs what raising a priority needs (ns_priority.h).
 * The companion reads what numasched sets anyway: the home node from the
 * memory policy, background work from the process's own nice value
 * (NS_BACKGROUND_NICE), which no process may lower back to 0 without
 * RLIMIT_NICE or CAP_SYS_NICE.
 */
#ifndef NS_COMPANION_H
#define NS_COMPANION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* the scheduling policy of sched_ext (Linux 6.12, include/uapi/linux/sched.h) */
#define NS_SCHED_EXT 7
/* the name numasched-scx registers (its struct sched_ext_ops) */
#define NS_COMPANION_NAME "numasched"

/*
 * Is numasched-scx the sched_ext scheduler in force?  Reads
 * SYSFS_ROOT/kernel/sched_ext/root/ops, which exists only while a scheduler
 * is loaded ("/sys" but in tests).
 */
bool		ns_companion_loaded(const char *sysfs_root);

/*
 * Process "pid" (0: the caller) into SCHED_EXT, or out to SCHED_OTHER,
 * keeping its nice value.
 */
bool		ns_set_sched_ext(pid_t pid, bool on, char *err, size_t errlen);

/* 1: process "pid" has SCHED_EXT, 0: another policy, -1: unknown (gone) */
int			ns_is_sched_ext(pid_t pid);

/* The process's own nice value (not its autogroup's); false with err. */
bool		ns_set_own_nice(pid_t pid, int nice, char *err, size_t errlen);

/* The process's own nice value, or -100 if unknown. */
int			ns_own_nice(pid_t pid);

#endif							/* NS_COMPANION_H */
