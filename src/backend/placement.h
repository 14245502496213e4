/*
 * placement.h - placing a process, moving it, giving its slot back
 */
#ifndef NUMASCHED_BACKEND_PLACEMENT_H
#define NUMASCHED_BACKEND_PLACEMENT_H

#include "backend/state.h"
#include "storage/proc.h"

/* Gives a slot back: its load, its class; lock held exclusively. */
extern void numasched_forget_slot_locked(numasched_slot *slot);

/* Places "proc" (MyProc, or another process); false when nothing was done. */
extern bool numasched_place(PGPROC *proc, numasched_kind kind, PGPROC *leader);

/*
 * Moves this process into the workload class of its settings now, or places
 * it (a backend whose placement waited for its per-role settings), or lets
 * it go (numasched.enabled turned off).
 */
extern void numasched_reclass(void);

/*
 * Forgets the slots in [first, end) of processes placed from outside that
 * are gone.
 */
extern void numasched_forget_gone(int first, int end);

typedef enum numasched_move_result
{
	MOVE_DONE,
	MOVE_NOT_PLACED,			/* numasched did not place that process */
	MOVE_BAD_NODE,				/* the node has no CPU group (any more) */
	MOVE_BAD_GROUP,				/* the group is not on that node */
	MOVE_BIND_FAILED,			/* the kernel refused (a WARNING says why) */
	MOVE_OUTSIDE_CLASS			/* not a group its workload class may use */
} numasched_move_result;

/*
 * Moves a placed process to a node, into *group or (if it is -1) the node's
 * least-loaded group, checking both against the plan in force under the
 * lock; "within_class": only into a group its workload class may use.  On
 * MOVE_BAD_GROUP, *group is the node's first group.
 */
extern numasched_move_result numasched_move_process(PGPROC *proc, pid_t pid, int node_index,
													int *group, bool within_class);

#endif							/* NUMASCHED_BACKEND_PLACEMENT_H */
