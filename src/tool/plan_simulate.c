/*
 * plan_simulate.c - numasched-plan simulate: options, a trace (sim_trace.c)
 * replayed through numasched and the baselines (sim_replay.c), and the
 * figures as a table or JSON
 */
#include "tool/sim.h"

#include <stdlib.h>
#include <string.h>

static const char *const policy_names[NPOLICIES] = {
	"numasched", "linux", "random-node", "round-robin", "first-fit"
};

static void
print_judged_json(const char *name, const sim_judged *j)
{
	printf("\"%s\":{\"leader_node_had_room\":%ld,\"on_leader_node_with_room\":%ld,"
		   "\"spills\":%ld,\"spills_nearest\":%ld,\"overflows\":%ld},",
		   name, j->leader_node_had_room, j->on_leader_node_with_room,
		   j->spills, j->spills_nearest, j->overflows);
}

static double
percent(long part, long whole)
{
	return whole > 0 ? 100.0 * part / whole : 100.0;
}

static void
print_simulate_json(const sim_options *opt, const sim_trace *trace, const plan_env *env,
					const sim_result *results)
{
	printf("{\"seed\":%llu,\"ticks\":%d,\"sessions\":%d,\"parallel_queries\":%d,"
		   "\"workers\":%d,\"groups\":%d,\"policies\":[",
		   (unsigned long long) opt->seed, opt->ticks, trace->nsessions, trace->nqueries,
		   opt->workers, env->plan->ngroups);
	for (int p = 0; p < NPOLICIES; p++)
	{
		const sim_result *r = &results[p];

		printf("%s{\"policy\":\"%s\",\"locality_percent\":%.3f,\"workers\":%ld,\"on_leader_node\":%ld,",
			   p ? "," : "", policy_names[p], 100.0 * r->local_accesses / (r->accesses > 0 ? r->accesses : 1),
			   r->workers, r->on_leader_node);
		print_judged_json("seen", &r->seen);
		print_judged_json("truth", &r->truth);
		printf("\"imbalance\":%.4f,\"moves\":%ld,\"moves_same_node\":%ld,"
			   "\"moves_1_hop\":%ld,\"moves_farther\":%ld,\"moves_cross_node\":%ld,"
			   "\"waiting_percent\":%.3f}",
			   r->imbalance_samples ? r->imbalance_sum / r->imbalance_samples : 0.0,
			   r->moves, r->moves_by_hops[0], r->moves_by_hops[1], r->moves_by_hops[2],
			   r->moves_by_hops[1] + r->moves_by_hops[2],
			   100.0 * r->waiting / (r->demand > 0 ? r->demand : 1));
	}
	printf("]}\n");
}

static void
print_simulate_table(const sim_options *opt, const sim_trace *trace, const plan_env *env,
					 const sim_result *results)
{
	printf("trace: seed %llu, %d ticks, %d sessions, %d parallel queries x %d workers, "
		   "%d groups on %d nodes, a scheduler pass every %d ticks\n",
		   (unsigned long long) opt->seed, opt->ticks, trace->nsessions, trace->nqueries,
		   opt->workers, env->plan->ngroups, env->topo->nnodes, opt->rebalance_every);
	printf("%-12s %9s %13s %17s %7s %17s %9s %6s %6s\n",
		   "", "memory", "workers on", "on leader's node", "", "spills to nearest", "imbalance", "", "cross-");
	printf("%-12s %9s %13s %17s %7s %17s %9s %6s %6s\n",
		   "policy", "locality", "leader's node", "when it had room", "spills", "node with room", "per CPU",
		   "moves", "node");
	for (int p = 0; p < NPOLICIES; p++)
	{
		const sim_result *r = &results[p];
		char		local[32],
					nearest[32];

		snprintf(local, sizeof(local), "%.1f%% (%.1f%%)",
				 percent(r->seen.on_leader_node_with_room, r->seen.leader_node_had_room),
				 percent(r->truth.on_leader_node_with_room, r->truth.leader_node_had_room));
		snprintf(nearest, sizeof(nearest), "%.1f%% (%.1f%%)",
				 percent(r->seen.spills_nearest, r->seen.spills),
				 percent(r->truth.spills_nearest, r->truth.spills));
		printf("%-12s %8.1f%% %12.1f%% %17s %7ld %17s %9.3f %6ld %6ld\n", policy_names[p],
			   100.0 * r->local_accesses / (r->accesses > 0 ? r->accesses : 1),
			   percent(r->on_leader_node, r->workers), local, r->seen.spills, nearest,
			   r->imbalance_samples ? r->imbalance_sum / r->imbalance_samples : 0.0, r->moves,
			   r->moves_by_hops[1] + r->moves_by_hops[2]);
	}
	printf("Memory locality: the share of memory accesses, over processes and ticks, that find\n"
		   "their memory on the node the process runs on (see --help for the model).\n"
		   "Room is judged on the load the policy's bookkeeping knew (a new process counts\n"
		   "one CPU until the scheduler measures it); in parentheses, on the trace's true load.\n");
}

int
plan_simulate_main(int argc, char **argv)
{
	static const struct option options[] = {
		PLAN_COMMON_LONG_OPTIONS,
		{"seed", required_argument, NULL, 's'},
		{"ticks", required_argument, NULL, 't'},
		{"sessions", required_argument, NULL, 'n'},
		{"workers", required_argument, NULL, 'w'},
		{"parallel-rate", required_argument, NULL, 'p'},
		{"rebalance-every", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"no-migrate-memory", no_argument, NULL, 'M'},
		{"imbalance-threshold", required_argument, NULL, 'i'},
		{"cross-node-moves", required_argument, NULL, 'x'},
		{"trace", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0}
	};
	plan_env	env = {0};
	sim_options opt = {1, 2000, -1, 300, 4, 10, 10, true};
	bool		json = false;
	const char *trace_file = NULL;
	sim_trace	trace;
	sim_result	results[NPOLICIES];
	int			o;

	ns_settings_default(&env.settings);
	while ((o = plan_getopt(argc, argv, options)) != -1)
	{
		switch (o)
		{
			case 's':
				opt.seed = plan_u64_option("--seed", optarg);
				break;
			case 't':
				opt.ticks = plan_int_option("--ticks", optarg, 1, 1000000);
				break;
			case 'n':
				opt.sessions = plan_int_option("--sessions", optarg, 1, 100000);
				break;
			case 'w':
				opt.workers = plan_int_option("--workers", optarg, 0, 64);
				break;
			case 'p':
				opt.parallel_rate = plan_int_option("--parallel-rate", optarg, 0, 1000);
				break;
			case 'r':
				opt.rebalance_every = plan_int_option("--rebalance-every", optarg, 0, 1000000);
				break;
			case 'j':
				json = true;
				break;
			case 'M':
				opt.migrate_memory = false;
				break;
			case 'T':
				trace_file = optarg;
				break;
			case 'i':
				env.settings.imbalance_threshold = plan_int_option("--imbalance-threshold", optarg, 1, 1000);
				break;
			case 'x':
				if (strcmp(optarg, "when-waiting") == 0)
					env.settings.cross_node_only_when_waiting = true;
				else if (strcmp(optarg, "by-imbalance") == 0)
					env.settings.cross_node_only_when_waiting = false;
				else
					plan_fail("--cross-node-moves must be when-waiting or by-imbalance, not \"%s\"", optarg);
				break;
			default:
				if (!plan_common_option(&env, o, optarg))
					plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
		}
	}
	plan_no_more_arguments(optind, argc, argv);
	plan_env_load(&env);
	/*
	 * By default about three quarters of the CPUs are busy on average: half
	 * as many sessions as CPUs, 60% of them busy, and their parallel queries.
	 */
	if (opt.sessions < 0)
		opt.sessions = (ns_cpuset_count(&env.topo->usable) + 1) / 2;

	if (trace_file)
		sim_read_trace(trace_file, &opt, &trace);
	else
		sim_make_trace(&opt, &trace);
	qsort(trace.queries, trace.nqueries, sizeof(sim_query), sim_compare_query_start);
	for (int p = 0; p < NPOLICIES; p++)
		sim_replay(env.plan, &env.settings, &opt, &trace, p, &results[p]);

	if (json)
		print_simulate_json(&opt, &trace, &env, results);
	else
		print_simulate_table(&opt, &trace, &env, results);
	free(trace.sessions);
	free(trace.queries);
	plan_env_free(&env);
	return 0;
}
