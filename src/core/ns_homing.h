/*
 * ns_homing.h - bringing home a process the kernel ran on another node
 * (ns_homing.c)
 *
 * Part of the numasched core (no PostgreSQL header).  Where the nodes share
 * their CPUs (numasched.node_binding = preferred) the kernel gives waiting
 * work an idle CPU of any node in its reach, and leaves it there: its
 * balancer never moves a lone running process back to an idle node, and
 * NUMA balancing does not look at one with a memory policy of its own.  So
 * a process found running away from its home CPUs while one of them was
 * idle through the last look goes back to that CPU; and processes found
 * each on the next one's home CPUs (two on each other's, or a ring of more)
 * move round, each to the CPU of the one whose place is its home: no idle
 * CPU is needed and no work waits.  A move costs once (some microseconds and the process's
 * cache), remote memory accesses cost all the while it stays.
 */
#ifndef NS_HOMING_H
#define NS_HOMING_H

#include "core/ns_cpuset.h"

/* the longest ring of processes away moved round at once */
#define NS_HOMING_MAX_CYCLE 8

/* the share of a look a CPU must have been idle to count as idle */
#define NS_HOMING_IDLE_PERCENT 80

/* A process found running or waiting to run. */
typedef struct ns_away
{
	int			cpu;			/* where it ran last */
	ns_cpuset	home;			/* its home CPUs; empty: leave it alone */
} ns_away;

/*
 * The CPUs idle for NS_HOMING_IDLE_PERCENT of "elapsed_us" at least, from
 * each CPU's idle time before and now (microseconds, per CPU id below
 * "ncpus"); returns how many.
 */
int			ns_idle_cpus(const uint64_t *idle_before, const uint64_t *idle_now, int ncpus,
						 uint64_t elapsed_us, ns_cpuset *idle);

/*
 * Where each of "n" processes goes: one away from its home CPUs to an idle
 * CPU of them, each idle CPU taking one, in the order given; else round a
 * ring of processes away, each on a CPU of the one before's home (at most
 * NS_HOMING_MAX_CYCLE), to the CPU of the one after it; -1 in to_cpu[i] for
 * one that stays.  Returns how many move.
 */
int			ns_choose_homecomings(const ns_cpuset *idle, int n, const ns_away *away, int *to_cpu);

#endif							/* NS_HOMING_H */
