/*
 * memory.h - a process's private memory
 */
#ifndef NUMASCHED_BACKEND_MEMORY_H
#define NUMASCHED_BACKEND_MEMORY_H

#include "backend/state.h"
#include "os/ns_os.h"

/*
 * Tries the kernel's memory calls once, in the postmaster at load time, and
 * says at LOG which it refused and what policy the postmaster inherited.
 * With one usable memory node, it makes none.
 */
extern void numasched_probe_memory(void);

/* Whether every call of "calls" (NS_CALL_* bits) is worth making here. */
extern bool numasched_memory_call_usable(int calls);

/* The postmaster's policy when it was not the default and may be used; else NULL. */
extern const ns_saved_policy *numasched_inherited_policy(void);

/* "used", "not needed: one memory node" or "refused: ...", for numasched_stats */
extern const char *numasched_memory_calls_state(void);

/*
 * This process was placed on a node (its memory policy; a parallel worker
 * also moves its pages), or let go (the kernel's default policy back).
 */
extern void numasched_memory_placed(int node_index, numasched_kind kind, bool bound);
extern void numasched_memory_unplaced(void);

/*
 * At a statement's start: adopts the memory policy of the node the slot now
 * names (after a move), and brings the process's memory there once it has
 * lived long enough for that to pay.
 */
extern void numasched_follow_slot(void);

/*
 * Memory of process "pid" per node id (kB), from its numa_maps: all of it,
 * and its private memory (either may be NULL).
 */
extern bool numasched_process_memory(pid_t pid, uint64 *kb_per_node, uint64 *private_kb_per_node);

#endif							/* NUMASCHED_BACKEND_MEMORY_H */
