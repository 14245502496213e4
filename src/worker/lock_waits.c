/*
 * lock_waits.c - which background processes hold a heavyweight lock that a
 * normal placed process waits for, directly or along a chain of waits, from
 * one look at the lock table
 *
 * pg_blocking_pids takes ProcArrayLock and all 16 lock-manager partition
 * locks for each process it is asked about, so asking it for each waiter of
 * a pile-up (50 sessions queued on one row) every 100 ms would hold up the
 * lock manager exactly when it is busiest.  GetLockStatusData takes the 16
 * partition locks once (all at once, shared, for a consistent copy), and
 * the rest is worked out here from its copy: a
 * holder blocks a waiter when it holds, on the same lock, a mode that
 * conflicts with the one asked for, and is not of the waiter's lock group.
 * A waiter queued behind another waiter for a mode that conflicts (a "soft"
 * block) is not counted: the one ahead waits for a holder, which is.
 */
#include "postgres.h"

#include "storage/lock.h"

#include "worker/lock_waits.h"
#include "backend/state.h"

/* a placed process by pid, for lookups in the lock table's copy */
typedef struct placed_pid
{
	pid_t		pid;
	int			slot;
} placed_pid;

static int
compare_placed(const void *a, const void *b)
{
	pid_t		pa = ((const placed_pid *) a)->pid;
	pid_t		pb = ((const placed_pid *) b)->pid;

	return pa < pb ? -1 : pa > pb;
}

static int
compare_locktag(const void *a, const void *b)
{
	return memcmp(&(*(LockInstanceData *const *) a)->locktag,
				  &(*(LockInstanceData *const *) b)->locktag, sizeof(LOCKTAG));
}

static int
slot_of(const placed_pid *placed, int nplaced, pid_t pid)
{
	placed_pid	key = {pid, -1};
	placed_pid *found = bsearch(&key, placed, nplaced, sizeof(placed_pid), compare_placed);

	return found ? found->slot : -1;
}

static bool
conflicts(const LockInstanceData *holder, const LockInstanceData *waiter)
{
	LockMethod	method = GetLockTagsMethodTable(&waiter->locktag);

	return holder != waiter && holder->leaderPid != waiter->leaderPid &&
		(method->conflictTab[waiter->waitLockMode] & holder->holdMask) != 0;
}

int
numasched_mark_background_blockers(bool *blocks_normal)
{
	LockData   *locks = GetLockStatusData();
	int			n = locks->nelements;
	LockInstanceData **by_tag = palloc(Max(n, 1) * sizeof(LockInstanceData *));
	int		   *group_of = palloc(Max(n, 1) * sizeof(int));	/* index in by_tag of its tag's first */
	placed_pid *placed = palloc(numasched_state->nslots * sizeof(placed_pid));
	placed_pid *waiting = palloc(Max(n, 1) * sizeof(placed_pid));	/* pid: its waiting entry */
	int		   *queue = palloc(Max(n, 1) * sizeof(int));
	bool	   *queued = palloc0(Max(n, 1) * sizeof(bool));
	int			nplaced = 0;
	int			nwaiting = 0;
	int			head = 0;
	int			tail = 0;
	int			marked = 0;

	/* the lock table's copy: in tag order, each entry knowing where its tag starts */
	for (int i = 0; i < n; i++)
		by_tag[i] = &locks->locks[i];
	qsort(by_tag, n, sizeof(LockInstanceData *), compare_locktag);
	for (int i = 0; i < n; i++)
		group_of[i] = i > 0 && compare_locktag(&by_tag[i], &by_tag[i - 1]) == 0 ? group_of[i - 1] : i;
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
		if (numasched_slots[i].pid != 0)
		{
			placed[nplaced].pid = numasched_slots[i].pid;
			placed[nplaced++].slot = i;
		}
	qsort(placed, nplaced, sizeof(placed_pid), compare_placed);
	for (int i = 0; i < n; i++)
		if (by_tag[i]->waitLockMode != NoLock)
		{
			int			slot = slot_of(placed, nplaced, by_tag[i]->pid);

			waiting[nwaiting].pid = by_tag[i]->pid;
			waiting[nwaiting++].slot = i;
			/* a normal placed process's wait: where the walk starts */
			if (slot >= 0 && !numasched_slots[slot].background)
			{
				queue[tail++] = i;
				queued[i] = true;
			}
		}
	qsort(waiting, nwaiting, sizeof(placed_pid), compare_placed);

	/* along the waits: whom each waits for, and whom those wait for */
	while (head < tail)
	{
		int			w = queue[head++];

		for (int h = group_of[w]; h < n && group_of[h] == group_of[w]; h++)
		{
			int			slot;
			int			next;

			if (!conflicts(by_tag[h], by_tag[w]))
				continue;
			slot = slot_of(placed, nplaced, by_tag[h]->pid);
			if (slot >= 0 && numasched_slots[slot].background && !blocks_normal[slot])
			{
				blocks_normal[slot] = true;
				marked++;
			}
			next = slot_of(waiting, nwaiting, by_tag[h]->pid);
			if (next >= 0 && !queued[next])
			{
				queue[tail++] = next;
				queued[next] = true;
			}
		}
	}
	return marked;
}
