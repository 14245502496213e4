/*
 * segment.c - the main shared memory segment: found in /proc/self/smaps,
 * interleaved over the nodes from its first page (numasched.shared_memory =
 * interleave), or else given a policy that keeps a huge-page segment safe
 * and an inherited interleave in force
 */
#include "postgres.h"

#include <unistd.h>

#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/pg_shmem.h"

#include "backend/segment.h"
#include "backend/memory.h"
#include "backend/state.h"

bool
numasched_main_segment(char **start, Size *length, Size *page_size, Size *pmd_mapped)
{
	uintptr_t	inside = (uintptr_t) numasched_state;
	char	   *maps = ns_read_text_file("/proc/self/smaps", NULL);
	char	   *line;
	bool		found = false;

	if (maps == NULL)
		return false;
	*page_size = sysconf(_SC_PAGESIZE);
	if (pmd_mapped)
		*pmd_mapped = 0;
	for (line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
	{
		unsigned long lo,
					hi,
					kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
		{
			if (found)
				break;			/* the next mapping: done */
			if (lo <= inside && inside < hi)
			{
				found = true;
				*start = (char *) lo;
				*length = hi - lo;
			}
		}
		else if (found && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			*page_size = kb * 1024;
		else if (found && pmd_mapped && sscanf(line, "ShmemPmdMapped: %lu kB", &kb) == 1)
			*pmd_mapped = kb * 1024;
	}
	free(maps);
	return found && ((PGShmemHeader *) *start)->magic == PGShmemMagic;
}

/*
 * With numasched.shared_memory = default the policy of the process touching
 * a page first decides where it goes.  A postmaster started under a policy
 * of its own (numactl --interleave=all) had every process interleave the
 * segment, and backends allocate by numasched.memory_policy now: the segment
 * keeps the inherited policy.  Without one, a huge-page segment gets the
 * local policy, in the postmaster before any backend exists: under
 * numasched.memory_policy = bind a node whose huge-page pool is empty would
 * fail the fault with SIGBUS, killing the backend and restarting the whole
 * cluster (the pages are reserved at start, but not per node).  NUMA
 * balancing skips huge-page mappings, so an explicit policy costs nothing
 * there; a 4 kB segment is left alone (an explicit policy would stop NUMA
 * balancing from moving its pages).
 */
void
numasched_guard_segment(void)
{
	const ns_saved_policy *inherited = numasched_inherited_policy();
	char	   *start;
	Size		length,
				page_size;
	char		err[NS_ERRLEN];
	bool		ok;

	if (!numasched_memory_call_usable(NS_CALL_MBIND) ||
		!numasched_main_segment(&start, &length, &page_size, NULL) ||
		(inherited == NULL && page_size <= (Size) sysconf(_SC_PAGESIZE)))
		return;
	ok = inherited ? ns_policy_range(start, length, inherited, err, sizeof(err)) :
		ns_local_policy_range(start, length, err, sizeof(err));
	if (!ok && inherited)
		ereport(WARNING,
				(errmsg("numasched could not give the shared memory segment the postmaster's memory policy"),
				 errdetail_from_core(err)));
	else if (!ok)
		ereport(WARNING,
				(errmsg("numasched could not give the huge-page shared memory segment the local memory policy"),
				 errdetail_from_core(err),
				 errhint("With numasched.memory_policy = bind, a backend on a node without free huge pages can crash the server.")));
}

/*
 * The nodes to interleave shared memory over: numasched.interleave_nodes, or
 * else the nodes with usable CPUs whose memory we may use (a CPU-less node,
 * such as a CXL expander, is farther and slower: only when named).
 */
void
numasched_interleave_nodes(ns_cpuset *nodes)
{
	const char *list = numasched_interleave_nodes_list ? numasched_interleave_nodes_list : "";
	char		err[NS_ERRLEN];

	/* the check hook accepted the list */
	if (list[0] == '\0' || !ns_cpuset_parse(list, strlen(list), NS_MAX_NODES, nodes, err, sizeof(err)))
		ns_topology_memory_nodes(numasched_machine, true, nodes);
}

/* the size of a transparent huge page (2 MB on x86-64) */
static Size
transparent_huge_page_size(void)
{
	char	   *text = ns_read_text_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", NULL);
	Size		size = text ? strtoul(text, NULL, 10) : 0;

	free(text);
	return size > 0 ? size : 2 * 1024 * 1024;
}

/* the postmaster's own policy while it initialises shared memory */
static ns_saved_policy postmaster_policy;
static bool postmaster_policy_saved = false;

void
numasched_interleave_initialisation(void)
{
	ns_cpuset	nodes;
	char		err[NS_ERRLEN];

	if (postmaster_policy_saved ||
		!numasched_memory_call_usable(NS_CALL_GET_MEMPOLICY | NS_CALL_SET_MEMPOLICY))
		return;
	numasched_interleave_nodes(&nodes);
	if (ns_interleave_own_allocations(&nodes, &postmaster_policy, err, sizeof(err)))
		postmaster_policy_saved = true;
	else
		ereport(WARNING,
				(errmsg("numasched could not interleave the initialisation of shared memory"),
				 errdetail_from_core(err)));
}

/* A crash restart makes a new segment: interleave its initialisation too. */
static void
interleave_next_initialisation(int code, Datum arg)
{
	numasched_interleave_initialisation();
}

void
numasched_interleave_shared_memory(void)
{
	char	   *start;
	Size		length,
				page_size,
				pmd_mapped;
	ns_cpuset	nodes;
	ns_interleave_result result;
	char		err[NS_ERRLEN];
	char		list[256];
	instr_time	started,
				duration;

	/* from here on the postmaster allocates as it did before */
	if (postmaster_policy_saved && !ns_restore_policy(&postmaster_policy, err, sizeof(err)))
		ereport(WARNING,
				(errmsg("numasched could not restore the memory policy of the postmaster"),
				 errdetail_from_core(err)));
	postmaster_policy_saved = false;
	on_shmem_exit(interleave_next_initialisation, 0);
	if (!numasched_memory_call_usable(NS_CALL_MBIND | NS_CALL_MOVE_PAGES))
		return;

	if (!numasched_main_segment(&start, &length, &page_size, &pmd_mapped))
	{
		ereport(WARNING,
				(errmsg("numasched could not find the main shared memory segment, it is not interleaved")));
		return;
	}
	numasched_interleave_nodes(&nodes);
	ns_cpuset_format(&nodes, list, sizeof(list));
	INSTR_TIME_SET_CURRENT(started);

	/*
	 * With transparent huge pages for shared memory (shmem_enabled =
	 * always), the kernel interleaves a huge page by its index, not by that
	 * of its 4 kB pages: moved per 4 kB page, each would go back and forth
	 * between the nodes of its halves and end on one.  So the unit is a huge
	 * page; what fell back to 4 kB pages was interleaved by the kernel as
	 * the postmaster touched it.
	 */
	if (pmd_mapped > 0 && page_size == (Size) sysconf(_SC_PAGESIZE))
		page_size = transparent_huge_page_size();
	if (!ns_interleave_range(start, length, page_size, &nodes, &result, err, sizeof(err)))
	{
		ereport(WARNING,
				(errmsg("numasched could not interleave the main shared memory segment"),
				 errdetail_from_core(err)));
		return;
	}
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, started);
	ereport(LOG,
			(errmsg("numasched interleaved the main shared memory segment (%zu MB) over nodes %s",
					length / (1024 * 1024), list),
			 errdetail("%llu of its %llu resident pages of %zu kB were moved to their interleave node in %.1f ms%s.",
					   (unsigned long long) result.moved, (unsigned long long) result.resident,
					   page_size / 1024, INSTR_TIME_GET_MILLISEC(duration),
					   result.not_moved ? psprintf(", %llu could not be moved", (unsigned long long) result.not_moved) : "")));
}
