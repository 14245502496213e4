/*
 * slowbind.c - an LD_PRELOAD shim for the tests of decisions in flight: a
 * change of another process's CPU affinity, told once numasched's lock is
 * released, reaches the kernel late.  A call for the pid written in
 * $SLOWBIND_PIDFILE waits $SLOWBIND_MS first, then appends to $SLOWBIND_LOG
 * the pid and the start time the kernel gives that pid at that moment (field
 * 22 of /proc/PID/stat), or "gone": whom the change is about to reach.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long
read_long(const char *path)
{
	FILE	   *f = fopen(path, "r");
	long		v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void
note_target(pid_t pid, const char *log)
{
	char		path[64];
	char		stat[1024];
	unsigned long long start = 0;
	FILE	   *f;
	FILE	   *out;
	size_t		n = 0;
	char	   *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	if ((f = fopen(path, "r")) != NULL)
	{
		n = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
	}
	stat[n] = '\0';
	/* the fields after the command's closing parenthesis: state is field 3 */
	if ((p = strrchr(stat, ')')) != NULL)
	{
		int			field = 2;

		for (p++; *p && field < 22; p++)
			if (*p == ' ')
				field++;
		start = strtoull(p, NULL, 10);
	}
	if ((out = fopen(log, "a")) == NULL)
		return;
	if (start)
		fprintf(out, "%d %llu\n", (int) pid, start);
	else
		fprintf(out, "%d gone\n", (int) pid);
	fclose(out);
}

int
sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
	static int	(*real) (pid_t, size_t, const cpu_set_t *);
	const char *pidfile = getenv("SLOWBIND_PIDFILE");
	const char *log = getenv("SLOWBIND_LOG");
	const char *ms = getenv("SLOWBIND_MS");

	if (real == NULL)
		real = (int (*) (pid_t, size_t, const cpu_set_t *)) dlsym(RTLD_NEXT, "sched_setaffinity");
	if (pid != 0 && pidfile && log && read_long(pidfile) == pid)
	{
		usleep((ms ? atoi(ms) : 2000) * 1000);
		note_target(pid, log);
	}
	return real(pid, size, mask);
}
