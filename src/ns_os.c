/*
 * ns_os.c - CPU affinity and memory policy through the kernel's interfaces
 *
 * set_mempolicy comes from libnuma's numaif.h (a thin system call wrapper),
 * so nothing of libnuma prints to stderr behind our back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ns_os.h"

#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static bool
to_kernel_mask(const ns_cpuset *cpus, cpu_set_t *mask, size_t size)
{
	int			cpu;

	CPU_ZERO_S(size, mask);
	NS_CPUSET_FOREACH(cpu, cpus)
		CPU_SET_S(cpu, size, mask);
	return CPU_COUNT_S(size, mask) > 0;
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

bool
ns_migrate_pages(pid_t pid, int from_id, int to_id, char *err, size_t errlen)
{
	unsigned long from[MASK_LONGS];
	unsigned long to[MASK_LONGS];

	if (from_id < 0 || from_id >= NS_MAX_NODES || to_id < 0 || to_id >= NS_MAX_NODES)
	{
		snprintf(err, errlen, "node out of range");
		return false;
	}
	node_mask(from, from_id);
	node_mask(to, to_id);
	if (migrate_pages(pid, KERNEL_MAXNODE, from, to) < 0)
	{
		snprintf(err, errlen, "migrate_pages failed: %s", strerror(errno));
		return false;
	}
	return true;
}

bool
ns_interleave_range(void *start, size_t length, const ns_cpuset *nodes, char *err, size_t errlen)
{
	unsigned long mask[MASK_LONGS];
	int			id;

	memset(mask, 0, sizeof(mask));
	NS_CPUSET_FOREACH(id, nodes)
	{
		if (id < NS_MAX_NODES)
			mask[id / LONG_BITS] |= 1UL << (id % LONG_BITS);
	}
	if (mbind(start, length, MPOL_INTERLEAVE, mask, KERNEL_MAXNODE, MPOL_MF_MOVE) != 0)
	{
		snprintf(err, errlen, "mbind failed: %s", strerror(errno));
		return false;
	}
	return true;
}

bool
ns_set_memory_policy(ns_memory_policy policy, int node_id, char *err, size_t errlen)
{
	unsigned long nodemask[MASK_LONGS];
	int			mode;

	if (policy == NS_MEMORY_NONE)
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

	if (set_mempolicy(mode, mode == MPOL_DEFAULT ? NULL : nodemask,
					  mode == MPOL_DEFAULT ? 0 : KERNEL_MAXNODE) != 0)
	{
		snprintf(err, errlen, "set_mempolicy failed: %s", strerror(errno));
		return false;
	}
	return true;
}
