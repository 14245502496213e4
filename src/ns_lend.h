/*
 * ns_lend.h - lending idle CPUs to groups whose work waits (ns_lend.c)
 *
 * Part of the numasched core (no PostgreSQL header).  A process is bound to
 * its group, but a group whose CPUs were all busy while its processes waited
 * for a CPU borrows the nearest group in reach that had a CPU idle: they may
 * run on the lender's CPUs too, and the kernel, balancing at every wakeup,
 * gives the waiting work the idle CPU.  A borrower that still waits while
 * its lender has no idle CPU either turns to another lender.  The group gives the CPUs back once it
 * and its lender together left a lender's worth of CPU idle for a while: its
 * own CPUs would have held its work.
 */
#ifndef NS_LEND_H
#define NS_LEND_H

#include "ns_policy.h"

/* how long a borrower's spare CPU is summed before it may give back */
#define NS_LEND_RETURN_WINDOW_US 200000

typedef struct ns_lending
{
	int			ngroups;
	int		   *lender;			/* per group: the group lending it CPUs, or -1 */
	uint64_t   *spare_us;		/* idle CPU time of it and its lender, this window */
	uint64_t   *window_us;		/* time summed in this window */
} ns_lending;

bool		ns_lending_alloc(int ngroups, ns_lending *lending);
void		ns_lending_free(ns_lending *lending);
/* Nothing lent (a new plan). */
void		ns_lending_reset(ns_lending *lending);

/*
 * One tick of tick_us: idle_us[g] is the CPU time the CPUs of group g were
 * idle in it, waited_us[g] the time its processes waited for a CPU (NULL:
 * none waited).  Gives back and lends; writes the groups whose lender
 * changed to changed[] (room for ngroups) and returns their number.
 */
int			ns_lend_tick(const ns_plan *plan, const ns_settings *settings,
						 const uint64_t *idle_us, const uint64_t *waited_us, uint64_t tick_us,
						 ns_lending *lending, int *changed);

#endif							/* NS_LEND_H */
