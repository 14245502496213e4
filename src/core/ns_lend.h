/*
 * ns_lend.h - lending idle CPUs to groups whose work waits (ns_lend.c)
 *
 * Part of the numasched core (no PostgreSQL header).  A process is bound to
 * its group, but a group whose processes wait for a CPU while its own CPUs
 * are all busy borrows the nearest group in reach that has a CPU idle and
 * borrows none itself: its processes may run on the lender's CPUs too, and
 * the kernel, balancing at every wakeup, gives the waiting work the idle CPU.
 * It gives them back once it and its lender together left a lender's worth
 * of CPU idle for a while (its own CPUs would have held its work).  Between
 * nodes, when the lender's work waits while the borrower has a CPU idle,
 * lending turns round; it never goes both ways at once there, where the
 * kernel might swap a process of each and keep both away from their memory.
 * Between groups of one node it goes both ways: no memory is farther away.
 * Where the groups of a node share its CPUs (plan->groups_share_node),
 * a node is lent to only once all of it is busy, and by another node.
 */
#ifndef NS_LEND_H
#define NS_LEND_H

#include "core/ns_policy.h"

/* how long a borrower's spare CPU is summed before it may give back */
#define NS_LEND_RETURN_WINDOW_US 200000

typedef struct ns_lending
{
	int			ngroups;
	int		   *lender;			/* per group: the group lending it CPUs, or -1 */
	uint64_t   *spare_us;		/* idle CPU of it and its lender, this window */
	uint64_t   *window_us;		/* time summed in this window */
	bool	   *noted;			/* written to changed[] in this tick */
} ns_lending;

/*
 * One tick, per group: the time its CPUs were idle, and the time its own
 * processes waited for a CPU.  Groups nobody looked at count as 0.
 */
typedef struct ns_lend_sample
{
	const uint64_t *idle_us;
	const uint64_t *waited_us;
} ns_lend_sample;

bool		ns_lending_alloc(int ngroups, ns_lending *lending);
void		ns_lending_free(ns_lending *lending);
/* Nothing lent (a new plan). */
void		ns_lending_reset(ns_lending *lending);

/*
 * One tick of tick_us: takes back, gives back and lends; writes the groups
 * whose lender changed to changed[] (room for ngroups: each once, though a
 * group may give back and borrow again in one tick) and returns their
 * number.
 */
int			ns_lend_tick(const ns_plan *plan, const ns_settings *settings, const ns_lend_sample *sample,
						 uint64_t tick_us, ns_lending *lending, int *changed);

/*
 * Where a statement that starts in group "home" runs: at home while one of
 * its CPUs runs no statement (running[] counts, per group, the statements
 * that run there, this one not yet); else in the group of the nearest node
 * where it would wait at least one statement less for a CPU (its wait: a
 * CPU's share of the statements ahead of it), the shortest wait; at home
 * when none.  There, a group's own statements lent CPUs elsewhere (away[],
 * NULL: none) count too: they come back when it idles.  A group of one CPU
 * lends to the next statement, a node of 32 only when it has a statement
 * for each CPU waiting.  Reach is lending's, and "reach" (a set of groups;
 * NULL: all) limits it further.  This is lending at the start of a burst:
 * the tick above sees the work that starts to wait later.
 */
int			ns_lend_statement(const ns_plan *plan, const ns_settings *settings, const uint32_t *running,
							  const uint32_t *away, int home, const ns_cpuset *reach);
/*
 * The groups whose statements share group g's CPUs, first .. first +
 * ngroups - 1 (g alone, or its node's where the groups of a node share its
 * CPUs), and the number of those CPUs.
 */
void		ns_lend_unit(const ns_plan *plan, int g, int *first, int *ngroups, int *cpus);

#endif							/* NS_LEND_H */
