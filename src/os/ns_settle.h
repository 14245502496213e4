/*
 * ns_settle.h - a process's private memory brought to its node
 *
 * No PostgreSQL header: the glue decides what to do with a failure, this
 * layer only reports it.
 */
#ifndef NS_SETTLE_H
#define NS_SETTLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What settling a process's private memory on a node found and did. */
typedef struct ns_settle_result
{
	uint64_t	resident;		/* resident private pages looked at */
	uint64_t	moved;			/* moved onto the node */
	uint64_t	shared;			/* shared copy-on-write on another node */
	uint64_t	copied;			/* of those, copied onto the node */
} ns_settle_result;

/*
 * Moves the private memory (anonymous mappings no file backs: heap, stack,
 * malloc's mmaps) of process "pid" (0: the caller) onto node "node_id",
 * with move_pages: only pages the process alone maps move, and the shared
 * memory segment and files are left alone.  With "copy_shared" (the caller
 * only), a page it still shares copy-on-write with its parent on another
 * node is faulted in writable (MADV_POPULATE_WRITE, which writes nothing),
 * so that the kernel gives the caller its own copy where it allocates now.  Call it once the process is bound to
 * the node's CPUs.
 */
bool		ns_settle_private_memory(pid_t pid, int node_id, bool copy_shared,
									 ns_settle_result *result, char *err, size_t errlen);

#endif							/* NS_SETTLE_H */
