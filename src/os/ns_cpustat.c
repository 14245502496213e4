/*
 * ns_cpustat.c - per-CPU idle time and CPU pressure from /proc (see
 * ns_cpustat.h)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pread under -std=c11 (the unit tests) */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/ns_cpustat.h"

bool
ns_cpustat_open(ns_cpustat *cs, char *err, size_t errlen)
{
	cs->pressure_fd = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
	cs->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	/* /proc/stat grows with CPUs and interrupts: 64 kB, doubled as needed */
	cs->buflen = 65536;
	cs->buf = malloc(cs->buflen);
	if (cs->stat_fd < 0 || cs->buf == NULL)
	{
		snprintf(err, errlen, "could not read /proc/stat: %s", strerror(cs->buf ? errno : ENOMEM));
		ns_cpustat_close(cs);
		return false;
	}
	return true;
}

void
ns_cpustat_close(ns_cpustat *cs)
{
	if (cs->stat_fd >= 0)
		close(cs->stat_fd);
	if (cs->pressure_fd >= 0)
		close(cs->pressure_fd);
	free(cs->buf);
	cs->stat_fd = cs->pressure_fd = -1;
	cs->buf = NULL;
}

/* The whole file into cs->buf, NUL-terminated. */
static bool
read_whole(ns_cpustat *cs, int fd)
{
	for (;;)
	{
		ssize_t		n = pread(fd, cs->buf, cs->buflen - 1, 0);
		char	   *bigger;

		if (n < 0)
			return false;
		if ((size_t) n < cs->buflen - 1)
		{
			cs->buf[n] = '\0';
			return true;
		}
		bigger = realloc(cs->buf, cs->buflen * 2);
		if (bigger == NULL)
			return false;
		cs->buf = bigger;
		cs->buflen *= 2;
	}
}

bool
ns_parse_stat_idle(const char *text, uint64_t *idle_us, int ncpus, long ticks_per_second)
{
	bool		any = false;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
	{
		int			cpu;
		unsigned long long user,
					nice,
					system,
					idle,
					iowait;

		/* "cpuN user nice system idle iowait ...": not the "cpu " total */
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu", &cpu, &user, &nice, &system, &idle, &iowait) != 6)
			return false;
		if (cpu >= 0 && cpu < ncpus)
			idle_us[cpu] = (uint64_t) (idle + iowait) * 1000000 / ticks_per_second;
		any = true;
	}
	return any;
}

bool
ns_parse_pressure_some(const char *text, uint64_t *total_us)
{
	const char *total;
	unsigned long long value;

	if (strncmp(text, "some ", 5) != 0 || (total = strstr(text, " total=")) == NULL ||
		(strchr(text, '\n') && total > strchr(text, '\n')))
		return false;
	if (sscanf(total + strlen(" total="), "%llu", &value) != 1)
		return false;
	*total_us = value;
	return true;
}

bool
ns_cpustat_idle(ns_cpustat *cs, uint64_t *idle_us, int ncpus)
{
	static long ticks_per_second;

	if (ticks_per_second <= 0)
		ticks_per_second = sysconf(_SC_CLK_TCK);
	return cs->stat_fd >= 0 && read_whole(cs, cs->stat_fd) &&
		ns_parse_stat_idle(cs->buf, idle_us, ncpus, ticks_per_second);
}

bool
ns_cpustat_waited(ns_cpustat *cs, uint64_t *waited_us)
{
	char		text[256];
	ssize_t		n;

	if (cs->pressure_fd < 0)
		return false;
	n = pread(cs->pressure_fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return false;			/* EOPNOTSUPP with psi=0 on the command line */
	text[n] = '\0';
	return ns_parse_pressure_some(text, waited_us);
}
