/*
 * ns_settle.c - a process's private memory brought to its node
 *
 * Its private mappings read from /proc/PID/maps, their resident pages found
 * with mincore() and moved with move_pages(); pages still shared
 * copy-on-write with the postmaster copied where the caller allocates now.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os/ns_settle.h"
#include "os/ns_syscall.h"
#include "core/ns_topology.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * A mapping of a process's private memory: private, readable and writable,
 * backed by no file (inode 0): the heap, the stack, anonymous mmaps (named
 * ones too), the zero-filled tails of programs' data.  Not the kernel's
 * special mappings ([vdso], [vvar], ...), not shared memory, not files.
 */
static bool
private_memory_mapping(const char *perms, unsigned long inode, const char *name)
{
	if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p' || inode != 0)
		return false;
	return name[0] == '\0' || strcmp(name, "[heap]") == 0 ||
		strcmp(name, "[stack]") == 0 || strncmp(name, "[anon:", 6) == 0;
}

/*
 * Gives the caller its own copy of pages it shares copy-on-write:
 * MADV_POPULATE_WRITE (Linux 5.14) faults them in writable, as a write
 * would, but answers an error where a write would raise a signal (a shadow
 * stack, a page under a protection key), and writes nothing.  Contiguous
 * pages go in one call.  Returns how many were copied; a kernel without it
 * copies nothing.
 */
static uint64_t
copy_shared_pages(void **pages, int n)
{
	long		page_size = sysconf(_SC_PAGESIZE);
	uint64_t	copied = 0;

	for (int i = 0; i < n;)
	{
		int			run = 1;

		while (i + run < n && (char *) pages[i + run] == (char *) pages[i] + run * page_size)
			run++;
		if (madvise(pages[i], run * page_size, MADV_POPULATE_WRITE) == 0)
			copied += run;
		i += run;
	}
	return copied;
}

#define PRIVATE_BATCH 512

/* one batch of page addresses; false with errno set on failure */
typedef bool (*private_batch_fn) (void **pages, int n, void *arg);

typedef struct page_batch
{
	void	   *pages[PRIVATE_BATCH];
	int			n;
	private_batch_fn fn;
	void	   *arg;
} page_batch;

/*
 * Adds a page address to the batch.  A batch ends where a huge page would:
 * move_pages moves a transparent huge page whole for its first address, and
 * the batch that looks again where its pages are must hold all of them to
 * count them.
 */
static bool
batch_add(page_batch *b, unsigned long addr, unsigned long page_size)
{
	unsigned long huge = PRIVATE_BATCH * page_size;
	bool		ok = true;

	if (b->n > 0 && ((unsigned long) b->pages[b->n - 1]) / huge != addr / huge)
	{
		ok = b->fn(b->pages, b->n, b->arg);
		b->n = 0;
	}
	b->pages[b->n++] = (void *) addr;
	if (ok && b->n == PRIVATE_BATCH)
	{
		ok = b->fn(b->pages, b->n, b->arg);
		b->n = 0;
	}
	return ok;
}

/*
 * The caller's own resident pages of [lo, hi), a window at a time (mincore).
 * Each run of them is faulted in readable first (MADV_POPULATE_READ, Linux
 * 5.14; it reads nothing and answers an error where a read would raise a
 * signal): on Linux 6.1 to 6.4, move_pages neither sees nor moves a page NUMA
 * balancing has marked for a hinting fault, and a backend that settles a
 * second after it started has many (the first scan comes a second after
 * fork, numa_balancing_scan_delay_ms); the fault, taken here, makes them
 * visible.  A mapping that went away meanwhile is passed over.
 */
static bool
add_own_resident_pages(page_batch *b, unsigned long lo, unsigned long hi, unsigned long page_size)
{
	unsigned char resident[RESIDENT_WINDOW];

	for (unsigned long window = lo; window < hi; window += RESIDENT_WINDOW * page_size)
	{
		unsigned long end = window + RESIDENT_WINDOW * page_size < hi ? window + RESIDENT_WINDOW * page_size : hi;
		unsigned long addr = window;

		if (mincore((void *) window, end - window, resident) != 0)
			return true;
		while (addr < end)
		{
			unsigned long run = addr;

			while (addr < end && (resident[(addr - window) / page_size] & 1))
				addr += page_size;
			if (addr == run)
			{
				addr += page_size;
				continue;
			}
			(void) madvise((void *) run, addr - run, MADV_POPULATE_READ);
			for (unsigned long page = run; page < addr; page += page_size)
				if (!batch_add(b, page, page_size))
					return false;
		}
	}
	return true;
}

/*
 * Hands the page addresses of the private mappings of process "pid" (0: the
 * caller, its resident pages only), from /proc/PID/maps, to "batch" in
 * batches: only those mappings, never the shared memory segment or files.
 */
static bool
visit_private_pages(pid_t pid, private_batch_fn batch, void *arg, char *err, size_t errlen)
{
	char		path[64];
	char	   *maps;
	unsigned long page_size = sysconf(_SC_PAGESIZE);
	page_batch	b = {.n = 0, .fn = batch, .arg = arg};
	bool		ok = true;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/maps");
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	maps = ns_read_text_file(path, NULL);
	if (maps == NULL)
	{
		snprintf(err, errlen, "could not read %s: %s", path, strerror(errno));
		return false;
	}
	for (char *line = maps; ok && line && *line;)
	{
		char	   *next = strchr(line, '\n');
		unsigned long lo,
					hi,
					inode;
		char		perms[5];
		int			name_at = 0;

		if (next)
			*next++ = '\0';
		if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %lu %n", &lo, &hi, perms, &inode, &name_at) >= 4 &&
			name_at > 0 && private_memory_mapping(perms, inode, line + name_at))
		{
			if (pid == 0)
				ok = add_own_resident_pages(&b, lo, hi, page_size);
			else
				for (unsigned long addr = lo; ok && addr < hi; addr += page_size)
					ok = batch_add(&b, addr, page_size);
		}
		line = next;
	}
	if (ok && b.n > 0)
		ok = batch(b.pages, b.n, arg);
	if (!ok)
		snprintf(err, errlen, "move_pages failed: %s", strerror(errno));
	free(maps);
	return ok;
}

/*
 * The caller's pages are resident (mincore said so) and were faulted in
 * readable just before, but NUMA balancing may have marked some for a hinting
 * fault again in between (its scan runs on the way back from any system
 * call); on Linux 6.1 to 6.4 move_pages then answers -EFAULT or -ENOENT for
 * them, and they would stay where they are, uncopied.  Fault those in again
 * and ask once more; the zero page answers -EFAULT every time.
 */
static bool
see_hidden_pages(void **pages, int n, int *status)
{
	void	   *hidden[PRIVATE_BATCH];
	int			again[PRIVATE_BATCH];
	int			index[PRIVATE_BATCH];
	int			nhidden = 0;
	long		page_size = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < n; i++)
		if (status[i] == -EFAULT || status[i] == -ENOENT)
		{
			index[nhidden] = i;
			hidden[nhidden++] = pages[i];
		}
	if (nhidden == 0)
		return true;
	for (int i = 0; i < nhidden; i++)
		(void) madvise(hidden[i], page_size, MADV_POPULATE_READ);
	if (sys_move_pages(0, nhidden, hidden, NULL, again, 0) < 0)
		return false;
	for (int i = 0; i < nhidden; i++)
		status[index[i]] = again[i];
	return true;
}

typedef struct settling
{
	pid_t		pid;
	int			node_id;
	bool		copy_shared;
	ns_settle_result *result;
} settling;

/* Settles one batch of page addresses of st->pid (0: the caller). */
static bool
settle_batch(void **pages, int n, void *arg)
{
	settling   *st = arg;
	int			node_id = st->node_id;
	ns_settle_result *result = st->result;
	int			nodes[PRIVATE_BATCH];
	int			status[PRIVATE_BATCH];
	int			now_on[PRIVATE_BATCH];
	void	   *shared[PRIVATE_BATCH];
	int			nshared = 0;
	int			elsewhere = 0;
	bool		busy = false;
	long		not_moved;

	/* where the pages are (no node list: nothing moves) */
	if (sys_move_pages(st->pid, n, pages, NULL, status, 0) < 0)
		return false;
	if (st->pid == 0 && !see_hidden_pages(pages, n, status))
		return false;
	for (int i = 0; i < n; i++)
	{
		if (status[i] < 0)
			continue;			/* not there, or the zero page */
		result->resident++;
		if (status[i] != node_id)
		{
			pages[elsewhere] = pages[i];
			nodes[elsewhere++] = node_id;
		}
	}
	if (elsewhere == 0)
		return true;
	/* a page shared with another process answers -EACCES and stays */
	not_moved = sys_move_pages(st->pid, elsewhere, pages, nodes, status, MPOL_MF_MOVE);
	if (not_moved < 0)
		return false;

	/*
	 * A transparent huge page moves whole for its first address, and the
	 * kernel answers -EBUSY for the others: then look again where they are.
	 */
	for (int i = 0; i < elsewhere && !busy; i++)
		busy = status[i] == -EBUSY;
	if (busy && sys_move_pages(st->pid, elsewhere, pages, NULL, now_on, 0) < 0)
		return false;
	for (int i = 0; i < elsewhere; i++)
	{
		if ((busy ? now_on[i] : status[i]) == node_id)
			result->moved++;
		else if (status[i] == -EACCES)
			shared[nshared++] = pages[i];
	}
	result->shared += nshared;
	if (st->copy_shared && nshared > 0)
		result->copied += copy_shared_pages(shared, nshared);
	return true;
}

bool
ns_settle_private_memory(pid_t pid, int node_id, bool copy_shared, ns_settle_result *result,
						 char *err, size_t errlen)
{
	/* only the caller can write its own pages */
	settling	st = {pid, node_id, copy_shared && pid == 0, result};

	memset(result, 0, sizeof(*result));
	return visit_private_pages(pid, settle_batch, &st, err, errlen);
}
