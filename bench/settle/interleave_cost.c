/*
 * interleave_cost - what numasched.shared_memory = interleave adds to server
 * start on this machine: ns_interleave_range (mbind, then every resident
 * page looked up and, if elsewhere, moved) over a shared anonymous mapping
 * of SIZE_MB that is fully written first, as the postmaster's segment is.
 *
 *     make -C bench/settle && bench/settle/interleave_cost [SIZE_MB] [RUNS]
 *
 * On a one-node machine nothing moves: this is the cost when the postmaster
 * initialised the segment under the interleave policy already (numasched's
 * case), which is all a start pays unless pages had to move.
 */
#define _GNU_SOURCE
#include "os/ns_os.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int
main(int argc, char **argv)
{
	size_t		length = (size_t) (argc > 1 ? atol(argv[1]) : 1024) << 20;
	int			runs = argc > 2 ? atoi(argv[2]) : 3;
	char	   *segment = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned char *resident = malloc(ns_resident_map_size(length));
	ns_cpuset	nodes;
	char		err[512];

	if (segment == MAP_FAILED || resident == NULL)
		return 1;
	memset(segment, 1, length);
	ns_cpuset_zero(&nodes);
	ns_cpuset_set(&nodes, 0);
	for (int r = 0; r < runs; r++)
	{
		ns_interleave_result result;
		double		start = now_ms(),
					took;

		if (!ns_interleave_range(segment, length, 4096, &nodes, resident, &result, err, sizeof(err)))
		{
			fprintf(stderr, "interleave_cost: %s\n", err);
			return 1;
		}
		took = now_ms() - start;
		printf("run %d: %llu resident pages (%zu MB), %llu moved, in %.1f ms: %.2f s per 10 GB\n",
			   r + 1, (unsigned long long) result.resident, length >> 20,
			   (unsigned long long) result.moved, took, took / (length >> 20) * 10240 / 1000);
	}
	return 0;
}
