/*
 * settle_cost - what bringing a process's private memory to its node costs,
 * in wall-clock time on this machine, with the code numasched runs
 * (ns_settle_private_memory).
 *
 *     make -C bench/settle && bench/settle/settle_cost [INHERITED_KB] [RUNS]
 *
 * A parent writes INHERITED_KB (default 600, about what a backend shares
 * copy-on-write with the postmaster) of heap, then forks RUNS children.  Each
 * child (1) settles its memory on node 0 with ns_settle_private_memory: on a
 * one-node machine every page is already there, so this is the cost of
 * looking (reading /proc/self/maps, move_pages over every private page),
 * paid by every placement on a multi-node machine; (2) writes one word of
 * every inherited page, the copy-on-write fault that copy_inherited_pages
 * causes for each shared page found on another node (the kernel's work:
 * allocate a page, copy 4 kB).  Medians over the runs.
 */
#define _GNU_SOURCE
#include "os/ns_os.h"
#include "os/ns_settle.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int
compare(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	size_t		kb = argc > 1 ? strtoul(argv[1], NULL, 10) : 600;
	int			runs = argc > 2 ? atoi(argv[2]) : 21;
	char	   *inherited = malloc(kb * 1024);
	double	   *look = calloc(runs, sizeof(double));
	double	   *copy = calloc(runs, sizeof(double));
	int			fds[2];
	ns_settle_result last = {0};

	memset(inherited, 1, kb * 1024);
	for (int r = 0; r < runs; r++)
	{
		pid_t		pid;

		if (pipe(fds) != 0 || (pid = fork()) < 0)
			return 1;
		if (pid == 0)
		{
			ns_settle_result result;
			char		err[512];
			double		took[2];
			double		start = now_ms();

			if (!ns_settle_private_memory(0, 0, true, &result, err, sizeof(err)))
			{
				fprintf(stderr, "settle_cost: %s\n", err);
				_exit(1);
			}
			took[0] = now_ms() - start;
			start = now_ms();
			for (size_t off = 0; off < kb * 1024; off += 4096)
				((volatile char *) inherited)[off] = 1;
			took[1] = now_ms() - start;
			if (write(fds[1], took, sizeof(took)) != sizeof(took) ||
				write(fds[1], &result, sizeof(result)) != sizeof(result))
				_exit(1);
			_exit(0);
		}
		double		took[2];

		close(fds[1]);
		if (read(fds[0], took, sizeof(took)) != sizeof(took) ||
			read(fds[0], &last, sizeof(last)) != sizeof(last))
			return 1;
		look[r] = took[0];
		copy[r] = took[1];
		close(fds[0]);
		waitpid(pid, NULL, 0);
	}
	qsort(look, runs, sizeof(double), compare);
	qsort(copy, runs, sizeof(double), compare);
	printf("%d runs, %zu kB inherited: looking at %llu resident private pages %.3f ms; "
		   "copying the %zu inherited pages %.3f ms (medians)\n",
		   runs, kb, (unsigned long long) last.resident, look[runs / 2],
		   kb / 4, copy[runs / 2]);
	return 0;
}
