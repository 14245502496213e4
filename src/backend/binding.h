/*
 * binding.h - what the kernel is told for a placed process
 *
 * Its CPUs and its tier, decided with the lock held by whoever writes the
 * slot, told by numasched_release once it is released, in the order
 * decided; the last decision is the one the kernel keeps.  A refusal is
 * counted and the books put back: a move or a visit taken back, else the
 * process marked unbound.
 */
#ifndef NUMASCHED_BACKEND_BINDING_H
#define NUMASCHED_BACKEND_BINDING_H

#include "backend/state.h"

/* Its CPUs; false when its process is gone. */
extern bool numasched_bind_slot_locked(numasched_slot *slot, const ns_cpuset *cpus);
/* The same, with the telling's number (numasched_told), -1 if it is gone. */
extern int	numasched_bind_locked(numasched_slot *slot, const ns_cpuset *cpus);

/*
 * Moved to "group" in the books and bound to "cpus"; taken back if the
 * kernel refuses.  Returns the telling's number (numasched_told), -1 if its
 * process is gone.
 */
extern int	numasched_bind_move_locked(numasched_slot *slot, int group, const ns_cpuset *cpus);

/* Lent "group"'s CPUs for its statement (moved there at once); ends if refused. */
extern int	numasched_bind_visit_locked(numasched_slot *slot, int group);

/*
 * Its tier as the slot says now (background and not raised; under the
 * companion or not); refused, the books go back to "was_background" and
 * "was_raised".
 */
extern int	numasched_retier_slot_locked(numasched_slot *slot, bool was_background, bool was_raised);

/*
 * Takes numasched's lock exclusively to decide up to "decisions" tellings,
 * whose room is made first: nothing that can fail is done under the lock.
 * With 0, the room there always is (a few, from the process's first
 * placement on): for a caller where an ERROR is not allowed.
 */
extern void numasched_lock_to_decide(int decisions);
/* The same for a decision about every placed process (the scheduler's). */
extern void numasched_lock_to_decide_for_all(void);

/* Tells the kernel what was decided: numasched_release does, lock released. */
extern void numasched_tell_kernel(void);

/* After numasched_release: whether telling "i" was taken, and if not why. */
extern bool numasched_told(int i, const char **err);

/* The number the next decision gets, and how many since "mark" were refused. */
extern int	numasched_tellings_mark(void);
extern int	numasched_refusals_since(int mark, const char **err);

/* Releases the lock, then sends any WARNING found while it was held. */
extern void numasched_release(void);

/*
 * Waits, lock released, until the tellings other processes decided for
 * "slot" are answered: its process, out of numasched or exiting, must not be
 * told anything after it set its own CPUs and priority back, nor its pid
 * once the kernel may give it to another process.  Call once its slot is
 * forgotten, so that no new telling comes.
 */
extern void numasched_wait_for_tellings(const numasched_slot *slot);

/*
 * At exit (a before_shmem_exit callback): the tellings of this process not
 * yet told, which an ERROR left, are given up, so that no process waits for
 * them; the lock is released first if an ERROR left it held.
 */
extern void numasched_abandon_tellings(int code, Datum arg);

#endif							/* NUMASCHED_BACKEND_BINDING_H */
