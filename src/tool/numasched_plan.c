/*
 * numasched_plan.c - numasched-plan: what numasched would do on a machine
 *
 *   numasched-plan topology [--sysfs ROOT] [--cpus LIST] [--groups-per-node N] [--json]
 *   numasched-plan simulate [...]
 *   numasched-plan bench [...]
 *   numasched-plan bursts [...]
 *
 * It links the same core as the extension, so what it prints is what the
 * server would use.  Errors are one line on stderr and exit status 2.
 */
#include "tool/plan.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#ifndef NUMASCHED_VERSION
#define NUMASCHED_VERSION "unknown"
#endif

static const char usage_text[] =
"numasched-plan shows and tests numasched's placement policy.\n"
"\n"
"Usage:\n"
"  numasched-plan topology [OPTION]... [--json]\n"
"      the nodes, distances, steal order and CPU groups numasched would use\n"
"  numasched-plan simulate [OPTION]... [--seed N] [--ticks N] [--sessions N]\n"
"                          [--workers N] [--parallel-rate PERMILLE]\n"
"                          [--rebalance-every N] [--imbalance-threshold PCT]\n"
"                          [--cross-node-moves when-waiting|by-imbalance]\n"
"                          [--no-migrate-memory] [--trace FILE] [--json]\n"
"      replay a seeded synthetic workload (or a trace: lines \"session ARRIVE\n"
"      LEAVE busy|idle\" and \"query SESSION START END\") through numasched and\n"
"      baselines: linux (idlest group, load balancing on any node, pages\n"
"      following as NUMA balancing moves them), random-node, round-robin,\n"
"      first-fit.  Headline: memory locality, the share of memory accesses\n"
"      that find their memory on the node the process runs on; a process\n"
"      allocates where it runs as much as it runs, a parallel worker's\n"
"      accesses go half to its leader's memory, numasched's moves take the\n"
"      memory along (unless --no-migrate-memory)\n"
"  numasched-plan bench [OPTION]... [--processes N] [--seed N]\n"
"      time one placement decision and one rebalance pass\n"
"  numasched-plan bursts [OPTION]... [--seed N] [--ticks N] [--sessions N]\n"
"                        [--burst-ms N] [--utilisation PCT] [--workers N]\n"
"                        [--parallel-rate PERMILLE] [--lend-every N]\n"
"                        [--balance-every N] [--json]\n"
"      sessions alternating CPU bursts and pauses, a tick a millisecond,\n"
"      through numasched (groups, idle CPUs lent), linux (work conserving in\n"
"      a node, between nodes every --balance-every ticks) and hard affinity;\n"
"      headline: lost work, CPU time that waited while a CPU in reach idled\n"
"      (one group per node unless --groups-per-node says otherwise)\n"
"\n"
"Options for every command:\n"
"  --sysfs ROOT            read the topology below ROOT instead of /sys; then\n"
"                          only --cpus restricts the CPUs, not our own mask\n"
"  --cpus LIST             use only these CPUs (a simulated cpuset), e.g. 0-7,16\n"
"  --nodes LIST            use only these nodes (numasched.nodes)\n"
"  --groups-per-node N     CPU groups per node, 0 = one per LLC domain (default,\n"
"                          but bursts: 1, the extension's default)\n"
"  --max-steal-distance D  never place farther than SLIT distance D, 0 = no limit\n"
"  --parallel MODE         parallel workers: compact (default) or spread\n"
"  --help, --version\n"
"\n"
"Exit status: 0 on success, 2 on bad input (one line on stderr says what).\n";

static void
print_distances_json(const ns_topology *topo, int from)
{
	printf("\"distances\":{");
	for (int b = 0; b < topo->nnodes; b++)
		printf("%s\"%d\":%d", b ? "," : "", topo->nodes[b].id, ns_distance(topo, from, b));
	printf("}");
}

static void
print_topology_json(const ns_plan *plan)
{
	const ns_topology *topo = plan->topo;
	int			nn = topo->nnodes;
	bool		first = true;

	printf("{\"nodes\":[");
	for (int n = 0; n < nn; n++)
	{
		const ns_node *node = &topo->nodes[n];

		if (plan->node_ngroups[n] == 0)
			continue;
		printf("%s{\"node\":%d,\"cpus\":\"%s\",\"memory_mb\":%llu,", first ? "" : ",",
			   node->id, plan_cpus_text(&node->cpus),
			   (unsigned long long) (node->memory_kb / 1024));
		first = false;
		print_distances_json(topo, n);
		printf(",\"steal_order\":[");
		for (int k = 0; k < plan->node_nsteal[n]; k++)
			printf("%s%d", k ? "," : "", topo->nodes[plan->steal[n * nn + k]].id);
		printf("],\"groups\":[");
		for (int g = plan->node_first_group[n]; g < plan->node_first_group[n] + plan->node_ngroups[n]; g++)
			printf("%s{\"group\":%d,\"cpus\":\"%s\"}", g == plan->node_first_group[n] ? "" : ",",
				   g, plan_cpus_text(&plan->groups[g].cpus));
		printf("]}");
	}
	printf("],\"memory_only_nodes\":[");
	first = true;
	for (int n = 0; n < nn; n++)
	{
		if (topo->nodes[n].has_cpus)
			continue;
		printf("%s{\"node\":%d,\"memory_mb\":%llu,", first ? "" : ",", topo->nodes[n].id,
			   (unsigned long long) (topo->nodes[n].memory_kb / 1024));
		first = false;
		print_distances_json(topo, n);
		printf("}");
	}
	printf("]}\n");
}

static void
print_topology_text(const ns_plan *plan)
{
	const ns_topology *topo = plan->topo;
	int			nn = topo->nnodes;

	for (int n = 0; n < nn; n++)
	{
		const ns_node *node = &topo->nodes[n];

		if (plan->node_ngroups[n] == 0 && node->has_cpus)
			continue;
		if (node->has_cpus)
			printf("node %d: %d CPUs (%s), %llu MB\n", node->id, node->ncpus,
				   plan_cpus_text(&node->cpus), (unsigned long long) (node->memory_kb / 1024));
		else
			printf("node %d: no CPUs, %llu MB of memory\n", node->id,
				   (unsigned long long) (node->memory_kb / 1024));
		printf("  distances:");
		for (int b = 0; b < nn; b++)
			printf(" %d:%d", topo->nodes[b].id, ns_distance(topo, n, b));
		printf("\n");
		if (!node->has_cpus)
			continue;
		printf("  steal order:");
		if (plan->node_nsteal[n] == 0)
			printf(" (none)");
		for (int k = 0; k < plan->node_nsteal[n]; k++)
			printf(" %d", topo->nodes[plan->steal[n * nn + k]].id);
		printf("\n");
		for (int g = plan->node_first_group[n]; g < plan->node_first_group[n] + plan->node_ngroups[n]; g++)
			printf("  group %d: %d CPUs (%s)\n", g, plan->groups[g].ncpus,
				   plan_cpus_text(&plan->groups[g].cpus));
	}
}

int
plan_topology_main(int argc, char **argv)
{
	static const struct option options[] = {
		PLAN_COMMON_LONG_OPTIONS,
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0}
	};
	plan_env	env = {0};
	bool		json = false;
	int			opt;

	ns_settings_default(&env.settings);
	while ((opt = plan_getopt(argc, argv, options)) != -1)
	{
		if (opt == 'j')
			json = true;
		else if (!plan_common_option(&env, opt, optarg))
			plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
	}
	plan_no_more_arguments(optind, argc, argv);
	plan_env_load(&env);
	if (json)
		print_topology_json(env.plan);
	else
		print_topology_text(env.plan);
	plan_env_free(&env);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *command;

	if (argc < 2)
		plan_fail("a command is needed: topology, simulate, bench or bursts (see numasched-plan --help)");
	command = argv[1];
	if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0)
	{
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(command, "--version") == 0)
	{
		printf("numasched-plan %s\n", NUMASCHED_VERSION);
		return 0;
	}
	/* subcommands parse their own options from argv[1] on */
	argc--;
	argv++;
	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--help") == 0)
		{
			fputs(usage_text, stdout);
			return 0;
		}
	}
	if (strcmp(command, "topology") == 0)
		return plan_topology_main(argc, argv);
	if (strcmp(command, "simulate") == 0)
		return plan_simulate_main(argc, argv);
	if (strcmp(command, "bench") == 0)
		return plan_bench_main(argc, argv);
	if (strcmp(command, "bursts") == 0)
		return plan_bursts_main(argc, argv);
	plan_fail("unknown command \"%s\": use topology, simulate, bench or bursts (see numasched-plan --help)",
			  command);
}
