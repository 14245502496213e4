/*
 * ns_cpuset.h - fixed-size CPU and node sets and the kernel's list syntax
 *
 * Part of the numasched core: plain C, no PostgreSQL header, so that the
 * command-line tool, the unit tests and the fuzzers link it alone.
 */
#ifndef NS_CPUSET_H
#define NS_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Debian's kernels are built with NR_CPUS = 8192 and NODES_SHIFT = 10. */
#define NS_MAX_CPUS 8192
#define NS_MAX_NODES 1024

#define NS_SET_WORDS(nbits) (((nbits) + 63) / 64)

typedef struct ns_cpuset
{
	uint64_t	bits[NS_SET_WORDS(NS_MAX_CPUS)];
} ns_cpuset;

void		ns_cpuset_zero(ns_cpuset *set);
void		ns_cpuset_set(ns_cpuset *set, int cpu);
void		ns_cpuset_clear(ns_cpuset *set, int cpu);
bool		ns_cpuset_test(const ns_cpuset *set, int cpu);
int			ns_cpuset_count(const ns_cpuset *set);
bool		ns_cpuset_empty(const ns_cpuset *set);
bool		ns_cpuset_equal(const ns_cpuset *a, const ns_cpuset *b);
void		ns_cpuset_and(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b);
void		ns_cpuset_or(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b);
/* a less b */
void		ns_cpuset_andnot(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b);

/* Next member at or after "from", or -1. */
int			ns_cpuset_next(const ns_cpuset *set, int from);

#define NS_CPUSET_FOREACH(cpu, set) \
	for ((cpu) = ns_cpuset_next((set), 0); (cpu) >= 0; (cpu) = ns_cpuset_next((set), (cpu) + 1))

/*
 * Parse the kernel's list syntax ("0-3,8,10-11", as in sysfs cpulist files
 * and /proc/PID/status) into "set".  Members must be below "limit".  A final
 * newline is accepted; an empty text is the empty set.  On error returns
 * false and writes a short reason (no file name) into err.
 */
bool		ns_cpuset_parse(const char *text, size_t len, int limit,
							ns_cpuset *set, char *err, size_t errlen);

/*
 * Format in the kernel's list syntax.  Returns the length the full text needs
 * (like snprintf), so a caller can detect truncation.
 */
size_t		ns_cpuset_format(const ns_cpuset *set, char *buf, size_t buflen);

#endif							/* NS_CPUSET_H */
