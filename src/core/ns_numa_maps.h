/*
 * ns_numa_maps.h - memory per node from /proc/PID/numa_maps
 *
 * Part of the numasched core (no PostgreSQL header).
 */
#ifndef NS_NUMA_MAPS_H
#define NS_NUMA_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Adds the memory of every mapping in a numa_maps text to kb[node] (node ids
 * below max_nodes).  A line's "N<node>=<pages>" counts are in the mapping's
 * kernelpagesize_kB (4 kB unless it says otherwise).  When "only_start" is not
 * zero, only the mapping that starts at that address counts, and its policy
 * ("default", "interleave:0-1", ...) is copied into policy.  Returns false on
 * malformed text.
 */
bool		ns_numa_maps_kb(const char *text, uint64_t *kb, int max_nodes,
							uintptr_t only_start, char *policy, size_t policylen);

/*
 * The same for a process's private memory only: the anonymous pages of
 * mappings no file backs (heap, stack, anonymous mmaps), as a process
 * allocates them with malloc.  Pages still shared copy-on-write with the
 * parent count: the process reads them where they are.
 */
bool		ns_numa_maps_private_kb(const char *text, uint64_t *kb, int max_nodes);

#endif							/* NS_NUMA_MAPS_H */
