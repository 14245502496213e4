/*
 * classes.h - workload classes
 *
 * The class of a process's settings, and what it means in the groups in
 * force; lock held exclusively.
 */
#ifndef NUMASCHED_BACKEND_CLASSES_H
#define NUMASCHED_BACKEND_CLASSES_H

#include "backend/state.h"

/* The class of this process's own settings, one more slot in it; -1: none. */
extern int	numasched_take_own_class_locked(void);
extern void numasched_drop_class_locked(int class_id);

/* What a class's settings mean in the groups in force. */
extern void numasched_compute_class_locked(numasched_class *class);

#endif							/* NUMASCHED_BACKEND_CLASSES_H */
