/*
 * ns_bandwidth.h - the cgroup bandwidth limits (cpu.max) the companion does
 * not keep, said once at start.
 */
#ifndef NS_BANDWIDTH_H
#define NS_BANDWIDTH_H

#include <stdio.h>

/*
 * Writes one line to "out" per cgroup under "root" (cgroup v2) whose cpu.max
 * sets a quota, at most "max_lines" of them and then how many more; returns
 * how many there are.  A root that cannot be read counts none.
 */
extern int	ns_report_bandwidth_limits(const char *root, FILE *out, int max_lines);

/* Where cgroup v2 is mounted ("/sys/fs/cgroup" on Debian), or NULL. */
extern const char *ns_cgroup2_root(void);

#endif							/* NS_BANDWIDTH_H */
