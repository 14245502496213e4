/*
 * failbind.c - an LD_PRELOAD shim for the fail-open test: the kernel refuses
 * every CPU affinity change, as under a seccomp filter or a cpuset that does
 * not allow it.  (numasched makes the memory calls with syscall(), which no
 * shim can replace: seccomp.c refuses those.)
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
