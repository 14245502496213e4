/*
 * ns_os.h - binding processes: CPU affinity and memory policy
 *
 * No PostgreSQL header: the glue decides what to do with a failure (a
 * WARNING once per process and a counter), this layer only reports it.
 */
#ifndef NS_OS_H
#define NS_OS_H

#include "ns_cpuset.h"

#include <stdint.h>
#include <sys/types.h>

typedef enum ns_memory_policy
{
	NS_MEMORY_NONE,				/* leave the process's memory alone */
	NS_MEMORY_LOCAL,			/* the kernel's default: the node it runs on */
	NS_MEMORY_PREFERRED,		/* allocate on the node first */
	NS_MEMORY_BIND				/* allocate on the node only */
} ns_memory_policy;

/* What settling a process's private memory on a node found and did. */
typedef struct ns_settle_result
{
	uint64_t	resident;		/* resident private pages looked at */
	uint64_t	moved;			/* moved onto the node */
	uint64_t	shared;			/* shared copy-on-write on another node */
	uint64_t	copied;			/* of those, copied onto the node */
} ns_settle_result;

/* Binds process "pid" (0: the caller) to "cpus". */
bool		ns_bind_cpus(pid_t pid, const ns_cpuset *cpus, char *err, size_t errlen);

/*
 * Sets the caller's memory policy for node "node_id".  NS_MEMORY_NONE and
 * NS_MEMORY_LOCAL both set the kernel's default, local allocation, which
 * leaves NUMA balancing free to correct it (an explicit policy stops it).
 */
bool		ns_set_memory_policy(ns_memory_policy policy, int node_id,
								 char *err, size_t errlen);

/*
 * Moves the caller's private memory (anonymous mappings no file backs: heap,
 * stack, malloc's mmaps) onto node "node_id".  Pages only the caller maps
 * are moved (move_pages).  With "copy_shared", a page it still shares
 * copy-on-write with its parent on another node is written in place (an
 * atomic compare-and-swap of a word with itself, which changes nothing),
 * so that the kernel gives the caller its own copy where it allocates now.
 * Call it once bound to the node's CPUs.  The shared memory segment and
 * files are left alone.
 */
bool		ns_settle_private_memory(int node_id, bool copy_shared, ns_settle_result *result,
									 char *err, size_t errlen);

/*
 * Moves the pages of process "pid" from node "from_id" to node "to_id"
 * (migrate_pages).  Returns false with a message on failure.
 */
bool		ns_migrate_pages(pid_t pid, int from_id, int to_id, char *err, size_t errlen);

/*
 * Interleaves the pages of [start, start + length) over the nodes in
 * "nodes" (node ids), moving the pages already there (mbind with
 * MPOL_MF_MOVE).
 */
bool		ns_interleave_range(void *start, size_t length, const ns_cpuset *nodes,
								char *err, size_t errlen);

#endif							/* NS_OS_H */
