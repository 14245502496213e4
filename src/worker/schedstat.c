/*
 * schedstat.c - the time each placed process ran and waited for a CPU, from
 * /proc/PID/schedstat, for the scheduler's passes and lending's ticks; and
 * whether it runs and where, from /proc/PID/stat, for homing's
 *
 * The file of each slot's process stays open while PostgreSQL's fd
 * accounting allows (AcquireExternalFD): re-read with pread, a look costs
 * one system call instead of three (open, read, close).  Past that budget it
 * is opened and closed each time.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"
#include "utils/memutils.h"

#include "worker/schedstat.h"
#include "backend/state.h"

typedef struct proc_file
{
	pid_t		pid;
	int			fd;
} proc_file;

static proc_file *files;		/* schedstat */
static proc_file *stat_files;	/* stat */

void
numasched_schedstat_init(void)
{
	files = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(proc_file));
	stat_files = MemoryContextAllocZero(TopMemoryContext, numasched_state->nslots * sizeof(proc_file));
	for (int i = 0; i < numasched_state->nslots; i++)
		files[i].fd = stat_files[i].fd = -1;
}

static void
close_file(proc_file *f)
{
	if (f->fd >= 0)
	{
		close(f->fd);
		ReleaseExternalFD();
	}
	f->fd = -1;
	f->pid = 0;
}

void
numasched_schedstat_forget_gone(void)
{
	for (int i = 0; i < numasched_state->nslots; i++)
	{
		if (files[i].pid != 0 && files[i].pid != numasched_slots[i].pid)
			close_file(&files[i]);
		if (stat_files[i].pid != 0 && stat_files[i].pid != numasched_slots[i].pid)
			close_file(&stat_files[i]);
	}
}

/* The file "name" of /proc/PID read into buf; false if it cannot be. */
static bool
read_proc_file(proc_file *f, pid_t pid, const char *name, char *buf, size_t size)
{
	ssize_t		n;
	int			fd;
	bool		keep = true;

	if (f->pid != pid)
		close_file(f);			/* another process's */
	fd = f->fd;
	if (fd < 0)
	{
		char		path[64];

		snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
		keep = AcquireExternalFD();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
		{
			if (keep)
				ReleaseExternalFD();
			return false;
		}
		if (keep)
		{
			f->fd = fd;
			f->pid = pid;
		}
	}
	n = pread(fd, buf, size - 1, 0);
	if (!keep)
		close(fd);
	if (n <= 0)
	{
		close_file(f);
		return false;
	}
	buf[n] = '\0';
	return true;
}

bool
numasched_read_schedstat(int slot, pid_t pid, uint64 *ran_ns, uint64 *waited_ns)
{
	char		buf[128];
	unsigned long long ran,
				waited;

	if (!read_proc_file(&files[slot], pid, "schedstat", buf, sizeof(buf)))
		return false;
	/* the time it ran and the time it waited on a run queue */
	if (sscanf(buf, "%llu %llu", &ran, &waited) != 2)
		return false;
	*ran_ns = ran;
	*waited_ns = waited;
	return true;
}

bool
numasched_read_where(int slot, pid_t pid, bool *runnable, int *cpu)
{
	char		buf[1024];
	char	   *p;
	char		state;

	if (!read_proc_file(&stat_files[slot], pid, "stat", buf, sizeof(buf)))
		return false;
	/* after the command's closing parenthesis: the state (field 3) ... */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %c", &state) != 1)
		return false;
	p += 2;
	/* ... and 36 fields on, the CPU it last ran on (field 39) */
	for (int field = 3; field < 39; field++)
		if ((p = strchr(p, ' ')) == NULL)
			return false;
		else
			p++;
	if (sscanf(p, "%d", cpu) != 1)
		return false;
	*runnable = state == 'R';
	return true;
}
