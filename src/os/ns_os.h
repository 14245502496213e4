/*
 * ns_os.h - binding processes: CPU affinity and memory policy
 *
 * No PostgreSQL header: the glue decides what to do with a failure (a
 * WARNING once per process and a counter), this layer only reports it.
 */
#ifndef NS_OS_H
#define NS_OS_H

#include "core/ns_cpuset.h"

#include <stdint.h>
#include <sys/types.h>

typedef enum ns_memory_policy
{
	NS_MEMORY_NONE,				/* leave the process's memory alone */
	NS_MEMORY_LOCAL,			/* the kernel's default: the node it runs on */
	NS_MEMORY_PREFERRED,		/* allocate on the node first */
	NS_MEMORY_BIND				/* allocate on the node only */
} ns_memory_policy;

/* Binds process "pid" (0: the caller) to "cpus". */
bool		ns_bind_cpus(pid_t pid, const ns_cpuset *cpus, char *err, size_t errlen);

/* How many CPUs process "pid" (0: the caller) may run on; -1 if unknown. */
int			ns_allowed_cpu_count(pid_t pid);

/* The CPU the caller runs on now; -1 if unknown. */
int			ns_running_cpu(void);

/*
 * Sets the caller's memory policy for node "node_id".  NS_MEMORY_NONE and
 * NS_MEMORY_LOCAL both set the kernel's default, local allocation, which
 * leaves NUMA balancing free to correct it (an explicit policy stops it).
 */
bool		ns_set_memory_policy(ns_memory_policy policy, int node_id,
								 char *err, size_t errlen);

/* A memory policy of the caller, saved to be put back. */
typedef struct ns_saved_policy
{
	int			mode;
	unsigned long mask[(NS_MAX_NODES + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long))];
} ns_saved_policy;

/*
 * Saves the caller's memory policy into *saved and sets MPOL_INTERLEAVE over
 * "nodes".  A shmem or hugetlb page faulted under it lands on the node an
 * mbind()-ed interleave policy over the same nodes would give it (the
 * kernel interleaves both by the page's offset), so memory initialised now
 * needs no moving later.
 */
bool		ns_interleave_own_allocations(const ns_cpuset *nodes, ns_saved_policy *saved,
										  char *err, size_t errlen);

/* Puts back a policy saved by ns_interleave_own_allocations. */
bool		ns_restore_policy(const ns_saved_policy *saved, char *err, size_t errlen);

/* The memory calls numasched makes, as bits */
#define NS_CALL_SET_MEMPOLICY 0x1
#define NS_CALL_GET_MEMPOLICY 0x2
#define NS_CALL_MBIND 0x4
#define NS_CALL_MOVE_PAGES 0x8
#define NS_CALL_ALL 0xf

/*
 * Makes each memory call once, changing nothing, and returns the ones the
 * kernel refused (a container's seccomp filter answers EPERM, a kernel
 * without NUMA ENOSYS), with what each answered in "err".  The caller's
 * policy, as it inherited it, is left in *inherited (MPOL_DEFAULT if it
 * cannot be read).
 */
int			ns_refused_memory_calls(ns_saved_policy *inherited, char *err, size_t errlen);

/* Whether a saved policy is the kernel's default; as numa_maps names it. */
bool		ns_policy_is_default(const ns_saved_policy *policy);
void		ns_format_policy(const ns_saved_policy *policy, char *out, size_t outlen);

/* Gives [start, start + length) a saved policy (mbind; no page moves). */
bool		ns_policy_range(char *start, size_t length, const ns_saved_policy *policy,
							char *err, size_t errlen);

/*
 * Visits the resident pages of [start, start + length) (mapped in pages of
 * page_size bytes) in batches of at most NS_PAGE_BATCH, with the node each
 * is on and its index in the mapping.  No page is allocated: mincore() says
 * which are resident, a window at a time, and with "map_first" each of those
 * is read once, which maps an existing page into the caller (move_pages()
 * only sees pages the caller maps; reading them is most of the cost on a
 * cold segment).  The visitor may move them.  Returns false with a message
 * on failure.
 */
#define NS_PAGE_BATCH 1024
typedef bool (*ns_page_visitor) (void **pages, const int *nodes, const size_t *index, int n,
								 void *arg, char *err, size_t errlen);
bool		ns_visit_resident_pages(char *start, size_t length, size_t page_size, bool map_first,
									ns_page_visitor visit, void *arg,
									char *err, size_t errlen);

/* What interleaving a mapping did. */
typedef struct ns_interleave_result
{
	uint64_t	resident;		/* resident pages */
	uint64_t	moved;			/* moved to their interleave node */
	uint64_t	not_moved;		/* elsewhere, and the kernel could not move them */
} ns_interleave_result;

/*
 * Gives [start, start + length) the local policy (mbind MPOL_LOCAL): a page
 * is allocated on the node of the CPU that touches it first, else on the
 * nearest node with room, whatever the toucher's own policy.
 */
bool		ns_local_policy_range(char *start, size_t length, char *err, size_t errlen);

/*
 * Interleaves [start, start + length) over the nodes in "nodes" (node ids):
 * the policy for pages touched from now on (mbind MPOL_INTERLEAVE), and
 * every page already resident moved to the node that policy assigns to it
 * (move_pages), since mbind leaves a page alone when it is on any node of
 * the mask.  Page k of the mapping belongs to the ((phase + k) mod n)-th
 * node of "nodes" in id order, as the kernel interleaves it, the phase being
 * the one most of the first resident pages show (see find_phase).  Only
 * pages the caller alone maps move without CAP_SYS_NICE: call it before any
 * other process maps them, from the process that wrote them (their pages are
 * mapped in it already).  Weighted interleave
 * (MPOL_WEIGHTED_INTERLEAVE, Linux 6.9) would change interleave_node() only.
 */
bool		ns_interleave_range(char *start, size_t length, size_t page_size,
								const ns_cpuset *nodes, ns_interleave_result *result,
								char *err, size_t errlen);

#endif							/* NS_OS_H */
