/*
 * ns_os.h - binding processes: CPU affinity and memory policy
 *
 * No PostgreSQL header: the glue decides what to do with a failure (a
 * WARNING once per process and a counter), this layer only reports it.
 */
#ifndef NS_OS_H
#define NS_OS_H

#include "ns_cpuset.h"

#include <sys/types.h>

typedef enum ns_memory_policy
{
	NS_MEMORY_NONE,				/* leave the process's policy alone */
	NS_MEMORY_PREFERRED,		/* allocate on the node first */
	NS_MEMORY_BIND				/* allocate on the node only */
} ns_memory_policy;

/* Binds process "pid" (0: the caller) to "cpus". */
bool		ns_bind_cpus(pid_t pid, const ns_cpuset *cpus, char *err, size_t errlen);

/* Sets the caller's memory policy for node "node_id" (NS_MEMORY_NONE: default). */
bool		ns_set_memory_policy(ns_memory_policy policy, int node_id,
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
