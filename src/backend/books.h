/*
 * books.h - a slot in the books: the groups its class allows, the CPUs
 * they give it, a move between groups
 */
#ifndef NUMASCHED_BACKEND_BOOKS_H
#define NUMASCHED_BACKEND_BOOKS_H

#include "backend/state.h"

/* The groups a slot's class may spill to; NULL: any. */
extern const ns_cpuset *numasched_slot_reach(const numasched_slot *slot);

/*
 * The groups of a slot's class, where the rebalancer may move it (it spills
 * only when placed); NULL: any.  Lock held.
 */
extern const ns_cpuset *numasched_slot_home(const numasched_slot *slot);

/*
 * The CPUs a slot's process gets in a group of the shared plan, nothing
 * lent: the group's (with numasched.group_binding = preferred, its node's
 * groups of its class), or at background priority every group in its
 * class's reach from there; lock held.
 */
extern void numasched_group_cpus_for(const numasched_slot *slot, int group, ns_cpuset *cpus);

/*
 * The CPUs the kernel was last told for a slot: its group's, and those of
 * a group lending it CPUs, or, at background priority, every group in its
 * class's reach; less the CPUs set aside, or only those where it is a lock
 * holder they are set aside for; lock held.
 */
extern void numasched_slot_kernel_cpus(const numasched_slot *slot, ns_cpuset *cpus);

/*
 * "cpus" of a process that runs on the CPUs set aside ("aside"): those of
 * them in "cpus"; of any other: "cpus" less them; either unless that leaves
 * none.  Lock held.
 */
extern void numasched_keep_off_set_aside(bool aside, ns_cpuset *cpus);

/*
 * Moves a slot to another group in the books (loads, counters, cooldown);
 * lock held exclusively.  The caller binds the process after releasing it.
 */
extern void numasched_move_slot_locked(numasched_slot *slot, int group);

/*
 * The group lending its CPUs to "group" now, if a process that may reach
 * the groups "reach" (NULL: all) may use them; else -1.  Lock held.
 */
extern int	numasched_lender_for_locked(int group, const ns_cpuset *reach);

#endif							/* NUMASCHED_BACKEND_BOOKS_H */
