/*
 * plan_bench.c - numasched-plan bench: the cost of one decision
 *
 * The loads are first filled by placing --processes processes through the
 * policy itself, then given measured weights (most busy, some idle), so the
 * decisions are timed on the state numasched would really be in.  Each
 * placement decision is timed alone and the timer's own cost (the median of
 * empty timings) is subtracted; a rebalance pass is timed on a fresh copy of
 * the same skewed state each time.
 */
#define _POSIX_C_SOURCE 200809L
#include "tool/plan.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* nearest-rank percentile of a sorted array */
static uint64_t
percentile(const uint64_t *sorted, int n, int pct)
{
	int			rank = (int) (((long) pct * n + 99) / 100);

	return sorted[rank > 0 ? rank - 1 : 0];
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

enum
{
	DECISIONS = 200000,
	PASSES = 300
};

/* Places every process through the policy, then gives each a measured weight. */
static void
fill_processes(const plan_env *env, ns_loads *loads, ns_proc *procs, int nprocs, uint64_t *rng)
{
	for (int i = 0; i < nprocs; i++)
	{
		ns_request	req = {false, -1, -1, -1, 0, NULL, NULL, -1};
		ns_placement where;

		ns_place(env->plan, loads, &env->settings, &req, &where);
		ns_loads_add(env->plan, loads, where.group, NS_DEFAULT_WEIGHT);
		procs[i].group = where.group;
		procs[i].moved_pass = 0;
		procs[i].keep_node = -1;
		procs[i].allowed = NULL;
	}
	ns_loads_reset(env->plan, loads);
	for (int i = 0; i < nprocs; i++)
	{
		procs[i].weight = xorshift(rng) % 100 < 70 ? NS_CPU_LOAD : NS_CPU_LOAD / 20;
		ns_loads_add(env->plan, loads, procs[i].group, procs[i].weight);
	}
}

/* A mix: new sessions, sessions with a previous group, parallel workers. */
static void
make_requests(ns_request *requests, const ns_proc *procs, int nprocs, uint64_t *rng)
{
	for (int i = 0; i < DECISIONS; i++)
	{
		ns_request *r = &requests[i];
		int			kind = (int) (xorshift(rng) % 4);
		int			some_group = procs[xorshift(rng) % nprocs].group;

		memset(r, 0, sizeof(*r));
		r->home_node = -1;
		r->running_cpu = -1;
		r->previous_group = kind == 1 ? some_group : -1;
		r->parallel_worker = kind >= 2;
		r->leader_group = kind >= 2 ? some_group : -1;
		r->worker_number = (int) (xorshift(rng) % 4);
	}
}

/* Times each placement decision, less what reading the clock costs. */
static void
time_placement(const plan_env *env, ns_loads *loads, const ns_request *requests, uint64_t *times)
{
	uint64_t	overhead;
	volatile int sink = 0;

	for (int i = 0; i < DECISIONS; i++)
	{
		uint64_t	t0 = now_ns();

		times[i] = now_ns() - t0;
	}
	qsort(times, DECISIONS, sizeof(uint64_t), compare_u64);
	overhead = percentile(times, DECISIONS, 50);

	for (int i = 0; i < DECISIONS; i++)
	{
		ns_placement where;
		uint64_t	t0 = now_ns();

		ns_place(env->plan, loads, &env->settings, &requests[i], &where);
		times[i] = now_ns() - t0;
		sink += where.group;
	}
	for (int i = 0; i < DECISIONS; i++)
		times[i] = times[i] > overhead ? times[i] - overhead : 0;
	qsort(times, DECISIONS, sizeof(uint64_t), compare_u64);
	printf("placement: median %llu ns, p99 %llu ns (%d groups on %d nodes, %d decisions, timer cost %llu ns subtracted)\n",
		   (unsigned long long) percentile(times, DECISIONS, 50),
		   (unsigned long long) percentile(times, DECISIONS, 99),
		   env->plan->ngroups, env->topo->nnodes, DECISIONS, (unsigned long long) overhead);
	(void) sink;
}

/* Skews the state (the busy processes of a few groups piled elsewhere), then times rebalance passes. */
static void
time_rebalance(const plan_env *env, ns_proc *procs, ns_proc *copy, int nprocs, uint64_t *rng, uint64_t *times)
{
	ns_move		moves[64];
	volatile int sink = 0;

	for (int i = 0; i < nprocs; i++)
		if (procs[i].weight == NS_CPU_LOAD && xorshift(rng) % 3 == 0)
			procs[i].group = (int) (xorshift(rng) % (env->plan->ngroups / 4 + 1));
	for (int i = 0; i < PASSES; i++)
	{
		uint64_t	t0;

		memcpy(copy, procs, nprocs * sizeof(ns_proc));
		t0 = now_ns();
		sink += ns_rebalance(env->plan, &env->settings, copy, nprocs, 1, moves, 64);
		times[i] = now_ns() - t0;
	}
	qsort(times, PASSES, sizeof(uint64_t), compare_u64);
	printf("rebalance (%d processes): median %.1f us, p99 %.1f us (%d passes of up to %d moves)\n",
		   nprocs, percentile(times, PASSES, 50) / 1000.0, percentile(times, PASSES, 99) / 1000.0,
		   PASSES, env->settings.max_moves);
	(void) sink;
}

int
plan_bench_main(int argc, char **argv)
{
	static const struct option options[] = {
		PLAN_COMMON_LONG_OPTIONS,
		{"processes", required_argument, NULL, 'n'},
		{"seed", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0}
	};
	plan_env	env = {0};
	int			nprocs = 1000;
	uint64_t	rng = 1;
	int			o;
	ns_loads	loads;
	ns_proc    *procs,
			   *copy;
	ns_request *requests;
	uint64_t   *times;

	ns_settings_default(&env.settings);
	while ((o = plan_getopt(argc, argv, options)) != -1)
	{
		if (o == 'n')
			nprocs = plan_int_option("--processes", optarg, 1, 1000000);
		else if (o == 's')
			rng = plan_u64_option("--seed", optarg) | 1;
		else if (!plan_common_option(&env, o, optarg))
			plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
	}
	plan_no_more_arguments(optind, argc, argv);
	plan_env_load(&env);

	procs = malloc(nprocs * sizeof(ns_proc));
	copy = malloc(nprocs * sizeof(ns_proc));
	requests = malloc(DECISIONS * sizeof(ns_request));
	times = malloc(DECISIONS * sizeof(uint64_t));
	if (!procs || !copy || !requests || !times || !ns_loads_alloc(env.plan, &loads))
		plan_fail("out of memory");

	fill_processes(&env, &loads, procs, nprocs, &rng);
	make_requests(requests, procs, nprocs, &rng);
	time_placement(&env, &loads, requests, times);
	time_rebalance(&env, procs, copy, nprocs, &rng, times);

	ns_loads_free(&loads);
	free(procs);
	free(copy);
	free(requests);
	free(times);
	plan_env_free(&env);
	return 0;
}
