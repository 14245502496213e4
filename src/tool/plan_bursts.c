/*
 * plan_bursts.c - numasched-plan bursts: options, the burst model
 * (sim_burst.c) run through numasched's two node bindings, a linux-like
 * baseline and hard affinity, and the figures as a table or JSON
 */
#include "tool/sim_burst.h"

#include <string.h>

static const char *const burst_policy_names[NBURST_POLICIES] = {"preferred", "strict", "linux", "hard"};

static double
share(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* The policies run, from the first, as a table or as one JSON object. */
static void
print_bursts(const plan_env *env, const burst_options *opt, const burst_result *results,
			 int first, bool json)
{
	if (json)
	{
		printf("{\"seed\":%llu,\"ticks\":%d,\"groups\":%d,\"burst_ms\":%d,\"utilisation_percent\":%d,"
			   "\"workers\":%d,\"parallel_rate\":%d,\"policies\":[",
			   (unsigned long long) opt->seed, opt->ticks, env->plan->ngroups, opt->burst_ms,
			   opt->utilisation, opt->workers, opt->parallel_rate);
		for (int p = first; p < NBURST_POLICIES; p++)
		{
			const burst_result *r = &results[p];

			printf("%s{\"policy\":\"%s\",\"cpu_ms\":%.0f,\"lost_work_percent\":%.4f,"
				   "\"waited_percent\":%.4f,\"locality_percent\":%.3f,\"cross_node\":%ld,\"lends\":%ld,"
				   "\"visits\":%ld,\"homecomings\":%ld,\"latency_p99_ms\":%.1f,\"latency_mean_ms\":%.2f}",
				   p > first ? "," : "", burst_policy_names[p], r->demand, share(r->lost, r->demand),
				   share(r->waited, r->demand), share(r->local, r->demand), r->cross_node, r->lends,
				   r->visits, r->homecomings, r->latency_p99, r->latency_mean);
		}
		printf("]}\n");
	}
	else
	{
		printf("%d groups, bursts of %d ms of CPU (%d%% with %d workers) for %d%% of the CPUs, %d ticks of 1 ms\n",
			   env->plan->ngroups, opt->burst_ms, opt->parallel_rate / 10, opt->workers, opt->utilisation, opt->ticks);
		printf("%-10s %10s %9s %9s %11s %7s %7s %7s %9s %9s\n", "policy", "lost work", "waited", "local",
			   "cross-node", "lends", "visits", "homing", "p99 ms", "mean ms");
		for (int p = first; p < NBURST_POLICIES; p++)
		{
			const burst_result *r = &results[p];

			printf("%-10s %9.3f%% %8.2f%% %8.2f%% %11ld %7ld %7ld %7ld %9.1f %9.2f\n", burst_policy_names[p],
				   share(r->lost, r->demand), share(r->waited, r->demand), share(r->local, r->demand),
				   r->cross_node, r->lends, r->visits, r->homecomings, r->latency_p99, r->latency_mean);
		}
		printf("lost work: CPU time that waited while a CPU in reach was idle, in %% of the CPU time run\n");
	}
}

int
plan_bursts_main(int argc, char **argv)
{
	static const struct option options[] = {
		PLAN_COMMON_LONG_OPTIONS,
		{"seed", required_argument, NULL, 's'},
		{"ticks", required_argument, NULL, 't'},
		{"sessions", required_argument, NULL, 'n'},
		{"burst-ms", required_argument, NULL, 'b'},
		{"utilisation", required_argument, NULL, 'u'},
		{"workers", required_argument, NULL, 'w'},
		{"parallel-rate", required_argument, NULL, 'p'},
		{"lend-every", required_argument, NULL, 'l'},
		{"balance-every", required_argument, NULL, 'B'},
		{"home-every", required_argument, NULL, 'H'},
		{"group-binding", required_argument, NULL, 'g'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0}
	};
	plan_env	env = {0};
	burst_options opt = {1, 20000, -1, 20, 60, 2, 100, 5, 8, 50};
	burst_result results[NBURST_POLICIES];
	bool		json = false;
	bool		strict = false; /* the extension's default: preferred */
	int			first;			/* the first policy run */
	int			o;

	ns_settings_default(&env.settings);
	/* the extension's default: one group per node */
	env.groups_per_node = 1;
	while ((o = plan_getopt(argc, argv, options)) != -1)
	{
		switch (o)
		{
			case 's':
				opt.seed = plan_u64_option("--seed", optarg);
				break;
			case 't':
				opt.ticks = plan_int_option("--ticks", optarg, 1, 10000000);
				break;
			case 'n':
				opt.sessions = plan_int_option("--sessions", optarg, 1, 100000);
				break;
			case 'b':
				opt.burst_ms = plan_int_option("--burst-ms", optarg, 1, 100000);
				break;
			case 'u':
				opt.utilisation = plan_int_option("--utilisation", optarg, 1, 100);
				break;
			case 'w':
				opt.workers = plan_int_option("--workers", optarg, 0, 64);
				break;
			case 'p':
				opt.parallel_rate = plan_int_option("--parallel-rate", optarg, 0, 1000);
				break;
			case 'l':
				opt.lend_every = plan_int_option("--lend-every", optarg, 1, 100000);
				break;
			case 'B':
				opt.balance_every = plan_int_option("--balance-every", optarg, 0, 100000);
				break;
			case 'H':
				opt.home_every = plan_int_option("--home-every", optarg, 1, 100000);
				break;
			case 'g':
				if (strcmp(optarg, "strict") != 0 && strcmp(optarg, "preferred") != 0)
					plan_fail("--group-binding must be preferred or strict, not \"%s\"", optarg);
				strict = strcmp(optarg, "strict") == 0;
				break;
			case 'j':
				json = true;
				break;
			default:
				if (!plan_common_option(&env, o, optarg))
					plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
		}
	}
	plan_no_more_arguments(optind, argc, argv);
	plan_env_load(&env);
	env.plan->groups_share_node = !strict;
	/* node_binding = preferred takes effect with group_binding = preferred only */
	first = strict ? BURST_STRICT : BURST_PREFERRED;
	for (int p = first; p < NBURST_POLICIES; p++)
		sim_bursts(env.plan, &env.settings, &opt, p, &results[p]);

	print_bursts(&env, &opt, results, first, json);
	plan_env_free(&env);
	return 0;
}
