/*
 * ns_cpustat.h - the machine-wide CPU signals lending runs on (ns_cpustat.c)
 *
 * Part of the OS binding (no PostgreSQL header): how long each CPU was idle
 * (/proc/stat) and how long work waited for a CPU anywhere (PSI,
 * /proc/pressure/cpu), both cumulative, read with one pread of a file kept
 * open, so that a look when nothing happens costs a few microseconds.
 */
#ifndef NS_CPUSTAT_H
#define NS_CPUSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ns_cpustat
{
	int			stat_fd;
	int			pressure_fd;	/* -1: no PSI (psi=0, or a kernel without it) */
	char	   *buf;
	size_t		buflen;
} ns_cpustat;

/* Opens the files; false (with a message) if /proc/stat cannot be read. */
bool		ns_cpustat_open(ns_cpustat *cs, char *err, size_t errlen);
void		ns_cpustat_close(ns_cpustat *cs);

/*
 * Microseconds each CPU has been idle (idle and iowait) since boot, into
 * idle_us[cpu] for cpu < ncpus; CPUs /proc/stat does not list (offline)
 * are left as they are.
 */
bool		ns_cpustat_idle(ns_cpustat *cs, uint64_t *idle_us, int ncpus);

/*
 * Microseconds during which some task waited for a CPU ("some" total of
 * /proc/pressure/cpu); false without PSI.
 */
bool		ns_cpustat_waited(ns_cpustat *cs, uint64_t *waited_us);

/* The parsers, for the tests: text as the kernel writes it. */
bool		ns_parse_stat_idle(const char *text, uint64_t *idle_us, int ncpus, long ticks_per_second);
bool		ns_parse_pressure_some(const char *text, uint64_t *total_us);

#endif							/* NS_CPUSTAT_H */
