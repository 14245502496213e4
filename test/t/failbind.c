/*
 * failbind.c - an LD_PRELOAD shim for the fail-open test: the kernel refuses
 * every CPU affinity and memory policy change, as under a seccomp filter
 * or a cpuset that does not allow them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

int
sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
	(void) pid;
	(void) size;
	(void) mask;
	errno = EPERM;
	return -1;
}

long
set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
	(void) mode;
	(void) nodemask;
	(void) maxnode;
	errno = EPERM;
	return -1;
}
