/*
 * ns_os.c - CPU affinity and memory policy through the kernel's interfaces
 *
 * The memory calls are made directly (syscall), not through libnuma: its
 * constructor calls get_mempolicy and set_mempolicy in every process that
 * loads it, which a machine with one memory node does not need and a
 * container's seccomp filter refuses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os/ns_os.h"
#include "os/ns_syscall.h"
#include "core/ns_topology.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool
to_kernel_mask(const ns_cpuset *cpus, cpu_set_t *mask, size_t size)
{
	int			cpu;

	CPU_ZERO_S(size, mask);
	NS_CPUSET_FOREACH(cpu, cpus)
		CPU_SET_S(cpu, size, mask);
	return CPU_COUNT_S(size, mask) > 0;
}

int
ns_allowed_cpu_count(pid_t pid)
{
	cpu_set_t  *mask = CPU_ALLOC(NS_MAX_CPUS);
	size_t		size = CPU_ALLOC_SIZE(NS_MAX_CPUS);
	int			count = -1;

	if (mask == NULL)
		return -1;
	if (sched_getaffinity(pid, size, mask) == 0)
		count = CPU_COUNT_S(size, mask);
	CPU_FREE(mask);
	return count;
}

int
ns_running_cpu(void)
{
	return sched_getcpu();
}

bool
ns_bind_cpus(pid_t pid, const ns_cpuset *cpus, char *err, size_t errlen)
{
	cpu_set_t  *mask = CPU_ALLOC(NS_MAX_CPUS);
	size_t		size = CPU_ALLOC_SIZE(NS_MAX_CPUS);
	bool		ok;

	if (mask == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return false;
	}
	if (!to_kernel_mask(cpus, mask, size))
	{
		snprintf(err, errlen, "empty CPU set");
		CPU_FREE(mask);
		return false;
	}
	ok = sched_setaffinity(pid, size, mask) == 0;
	if (!ok)
		snprintf(err, errlen, "sched_setaffinity failed: %s", strerror(errno));
	CPU_FREE(mask);
	return ok;
}

/* The kernel reads maxnode - 1 bits, as libnuma passes them. */
#define KERNEL_MAXNODE (NS_MAX_NODES + 1)
#define LONG_BITS (8 * sizeof(unsigned long))
#define MASK_LONGS ((NS_MAX_NODES + LONG_BITS - 1) / LONG_BITS)

static void
node_mask(unsigned long *mask, int node_id)
{
	memset(mask, 0, MASK_LONGS * sizeof(unsigned long));
	mask[node_id / LONG_BITS] |= 1UL << (node_id % LONG_BITS);
}

/* The kernel's node mask of a set of node ids. */
static void
nodes_mask(const ns_cpuset *nodes, unsigned long *mask)
{
	int			id;

	memset(mask, 0, MASK_LONGS * sizeof(unsigned long));
	NS_CPUSET_FOREACH(id, nodes)
	{
		if (id < NS_MAX_NODES)
			mask[id / LONG_BITS] |= 1UL << (id % LONG_BITS);
	}
}


bool
ns_visit_resident_pages(char *start, size_t length, size_t page_size, bool map_first,
						ns_page_visitor visit, void *arg, char *err, size_t errlen)
{
	size_t		base = sysconf(_SC_PAGESIZE);
	unsigned char resident[RESIDENT_WINDOW];

	/*
	 * A window holds whole pages; a page larger than the window (1 GB huge
	 * pages) is asked for by its first base page alone.
	 */
	bool		page_at_a_time = page_size > RESIDENT_WINDOW * base;
	size_t		window_length = page_at_a_time ? page_size : RESIDENT_WINDOW * base / page_size * page_size;
	void	   *pages[NS_PAGE_BATCH];
	int			nodes[NS_PAGE_BATCH];
	size_t		index[NS_PAGE_BATCH];
	int			n = 0;
	bool		ok = true;

	for (size_t window = 0; ok && window < length; window += window_length)
	{
		size_t		end = window + window_length < length ? window + window_length : length;

		if (mincore(start + window, page_at_a_time ? base : end - window, resident) != 0)
		{
			snprintf(err, errlen, "mincore failed: %s", strerror(errno));
			return false;
		}
		for (size_t offset = window; ok && offset < end; offset += page_size)
		{
			bool		last = offset + page_size >= length;

			if (resident[(offset - window) / base] & 1)
			{
				if (map_first)
					(void) *(volatile char *) (start + offset);
				index[n] = offset / page_size;
				pages[n++] = start + offset;
			}
			if (n == NS_PAGE_BATCH || (last && n > 0))
			{
				if (sys_move_pages(0, n, pages, NULL, nodes, 0) != 0)
				{
					snprintf(err, errlen, "move_pages failed: %s", strerror(errno));
					ok = false;
				}
				else
					ok = visit(pages, nodes, index, n, arg, err, errlen);
				n = 0;
			}
		}
	}
	return ok;
}

typedef struct interleaving
{
	int			node_ids[NS_MAX_NODES];
	int			nnodes;
	int			phase;			/* -1 until the first batch has shown it */
	ns_interleave_result *result;
} interleaving;

/* The node the kernel's interleave policy assigns to page "index". */
static int
interleave_node(const interleaving *il, size_t index)
{
	return il->node_ids[(il->phase + index) % il->nnodes];
}

/*
 * The kernel puts page k of an interleaved mapping on node (bias + k) mod n
 * of the mask, where the bias is the shmem file's inode number (4 kB pages)
 * or 0 (hugetlb); kernels have changed how they compute it.  Rather than
 * guess, take the phase most of the first batch's pages agree with: the
 * postmaster faulted them under the same interleave policy.
 */
static void
find_phase(interleaving *il, const int *nodes, const size_t *index, int n)
{
	int			agree[NS_MAX_NODES] = {0};

	il->phase = 0;
	for (int i = 0; i < n; i++)
		for (int p = 0; p < il->nnodes; p++)
			if (nodes[i] == il->node_ids[(p + index[i]) % il->nnodes])
				agree[p]++;
	for (int p = 1; p < il->nnodes; p++)
		if (agree[p] > agree[il->phase])
			il->phase = p;
}

static bool
move_to_interleave_nodes(void **pages, const int *nodes, const size_t *index, int n,
						 void *arg, char *err, size_t errlen)
{
	interleaving *il = arg;
	void	   *misplaced[NS_PAGE_BATCH];
	int			targets[NS_PAGE_BATCH];
	int			status[NS_PAGE_BATCH];
	int			m = 0;

	if (il->phase < 0)
		find_phase(il, nodes, index, n);
	for (int i = 0; i < n; i++)
		if (nodes[i] >= 0)
			il->result->resident++;
	/*
	 * Grouped by target: move_pages migrates a run of pages bound for one
	 * node at once, and would migrate page by page if targets alternated.
	 */
	for (int t = 0; t < il->nnodes; t++)
	{
		for (int i = 0; i < n; i++)
		{
			int			target = interleave_node(il, index[i]);

			if (nodes[i] >= 0 && nodes[i] != target && target == il->node_ids[t])
			{
				misplaced[m] = pages[i];
				targets[m++] = target;
			}
		}
	}
	if (m == 0)
		return true;
	if (sys_move_pages(0, m, misplaced, targets, status, MPOL_MF_MOVE) < 0)
	{
		snprintf(err, errlen, "move_pages failed: %s", strerror(errno));
		return false;
	}
	for (int i = 0; i < m; i++)
	{
		if (status[i] == targets[i])
			il->result->moved++;
		else
			il->result->not_moved++;
	}
	return true;
}

bool
ns_local_policy_range(char *start, size_t length, char *err, size_t errlen)
{
	if (sys_mbind(start, length, MPOL_LOCAL, NULL, 0) != 0)
	{
		snprintf(err, errlen, "mbind failed: %s", strerror(errno));
		return false;
	}
	return true;
}

bool
ns_interleave_range(char *start, size_t length, size_t page_size,
					const ns_cpuset *nodes, ns_interleave_result *result,
					char *err, size_t errlen)
{
	unsigned long mask[MASK_LONGS];
	interleaving il = {.nnodes = 0, .phase = -1, .result = result};
	int			id;

	memset(result, 0, sizeof(*result));
	nodes_mask(nodes, mask);
	NS_CPUSET_FOREACH(id, nodes)
	{
		if (id < NS_MAX_NODES)
			il.node_ids[il.nnodes++] = id;
	}
	if (il.nnodes == 0)
	{
		snprintf(err, errlen, "no node to interleave over");
		return false;
	}
	if (sys_mbind(start, length, MPOL_INTERLEAVE, mask, KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "mbind failed: %s", strerror(errno));
		return false;
	}
	return ns_visit_resident_pages(start, length, page_size, false,
								   move_to_interleave_nodes, &il, err, errlen);
}

bool
ns_interleave_own_allocations(const ns_cpuset *nodes, ns_saved_policy *saved,
							  char *err, size_t errlen)
{
	unsigned long mask[MASK_LONGS];

	if (sys_get_mempolicy(&saved->mode, saved->mask, KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "get_mempolicy failed: %s", strerror(errno));
		return false;
	}
	nodes_mask(nodes, mask);
	if (sys_set_mempolicy(MPOL_INTERLEAVE, mask, KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "set_mempolicy failed: %s", strerror(errno));
		return false;
	}
	return true;
}

/* set_mempolicy of a saved policy; -1 with errno on failure */
static long
set_saved_policy(const ns_saved_policy *saved)
{
	bool		any = false;

	for (size_t i = 0; i < MASK_LONGS; i++)
		any |= saved->mask[i] != 0;
	return sys_set_mempolicy(saved->mode, any ? saved->mask : NULL, any ? KERNEL_MAXNODE : 0);
}

bool
ns_restore_policy(const ns_saved_policy *saved, char *err, size_t errlen)
{
	if (set_saved_policy(saved) != 0)
	{
		snprintf(err, errlen, "set_mempolicy failed: %s", strerror(errno));
		return false;
	}
	return true;
}

bool
ns_set_memory_policy(ns_memory_policy policy, int node_id, char *err, size_t errlen)
{
	unsigned long nodemask[MASK_LONGS];
	int			mode;

	if (policy == NS_MEMORY_NONE || policy == NS_MEMORY_LOCAL)
		mode = MPOL_DEFAULT;
	else
	{
		if (node_id < 0 || node_id >= NS_MAX_NODES)
		{
			snprintf(err, errlen, "node %d is out of range", node_id);
			return false;
		}
		node_mask(nodemask, node_id);
		mode = policy == NS_MEMORY_BIND ? MPOL_BIND : MPOL_PREFERRED;
	}

	if (sys_set_mempolicy(mode, mode == MPOL_DEFAULT ? NULL : nodemask,
					  mode == MPOL_DEFAULT ? 0 : KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "set_mempolicy failed: %s", strerror(errno));
		return false;
	}
	return true;
}

int
ns_refused_memory_calls(ns_saved_policy *inherited, char *err, size_t errlen)
{
	int			refused = 0;
	long		page_size = sysconf(_SC_PAGESIZE);
	void	   *page;
	int			status;
	size_t		used = 0;

#define REFUSED(call, name) \
	do { \
		refused |= (call); \
		if (used < errlen) \
			used += snprintf(err + used, errlen - used, "%s%s failed: %s", \
							 used ? ", " : "", (name), strerror(errno)); \
	} while (0)

	err[0] = '\0';
	memset(inherited, 0, sizeof(*inherited));
	/* set_mempolicy is tried with the policy the process has: nothing changes */
	if (sys_get_mempolicy(&inherited->mode, inherited->mask, KERNEL_MAXNODE) != 0)
	{
		REFUSED(NS_CALL_GET_MEMPOLICY | NS_CALL_SET_MEMPOLICY, "get_mempolicy");
		inherited->mode = MPOL_DEFAULT;
	}
	else if (set_saved_policy(inherited) != 0)
		REFUSED(NS_CALL_SET_MEMPOLICY, "set_mempolicy");
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
	{
		snprintf(err, errlen, "mmap failed: %s", strerror(errno));
		return NS_CALL_ALL;
	}
	*(volatile char *) page = 1;
	if (sys_mbind(page, page_size, MPOL_DEFAULT, NULL, 0) != 0)
		REFUSED(NS_CALL_MBIND, "mbind");
	if (sys_move_pages(0, 1, &page, NULL, &status, 0) != 0)
		REFUSED(NS_CALL_MOVE_PAGES, "move_pages");
	munmap(page, page_size);
#undef REFUSED
	return refused;
}

bool
ns_policy_is_default(const ns_saved_policy *policy)
{
	return policy->mode == MPOL_DEFAULT;
}

void
ns_format_policy(const ns_saved_policy *policy, char *out, size_t outlen)
{
	ns_cpuset	nodes;
	char		list[256];
	const char *name;

	ns_cpuset_zero(&nodes);
	for (int id = 0; id < NS_MAX_NODES; id++)
		if (policy->mask[id / LONG_BITS] & (1UL << (id % LONG_BITS)))
			ns_cpuset_set(&nodes, id);
	ns_cpuset_format(&nodes, list, sizeof(list));
	/* the names numa_maps prints; the mode flags left out */
	switch (policy->mode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES))
	{
		case MPOL_DEFAULT:
			name = "default";
			break;
		case MPOL_PREFERRED:
			name = "prefer";
			break;
		case MPOL_BIND:
			name = "bind";
			break;
		case MPOL_INTERLEAVE:
			name = "interleave";
			break;
		case MPOL_LOCAL:
			name = "local";
			break;
		default:
			name = "policy";
			break;
	}
	if (list[0])
		snprintf(out, outlen, "%s:%s", name, list);
	else
		snprintf(out, outlen, "%s", name);
}

bool
ns_policy_range(char *start, size_t length, const ns_saved_policy *policy, char *err, size_t errlen)
{
	if (sys_mbind(start, length, policy->mode, policy->mask, KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "mbind failed: %s", strerror(errno));
		return false;
	}
	return true;
}
