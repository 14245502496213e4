/*
 * plan.h - the numasched-plan command-line tool: the helpers every
 * subcommand shares (plan_common.c) and the subcommands' entry points
 */
#ifndef PLAN_H
#define PLAN_H

#include "core/ns_policy.h"

#include <getopt.h>
#include <stdio.h>

#define PLAN_EXIT_USAGE 2

/* What every subcommand needs: the topology, the plan, the settings. */
typedef struct plan_env
{
	const char *sysfs_root;		/* NULL: the live /sys */
	const char *cpus_text;		/* --cpus */
	const char *nodes_text;		/* --nodes */
	int			groups_per_node;
	ns_settings settings;
	ns_topology *topo;
	ns_plan    *plan;
} plan_env;

/* Prints "numasched-plan: <message>" and exits with status 2. */
void		plan_fail(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));

/* Strict integer option parsing; fails with a message naming the option. */
int			plan_int_option(const char *option, const char *value, int min, int max);
uint64_t	plan_u64_option(const char *option, const char *value);

/*
 * Handles an option common to all subcommands (--sysfs, --cpus, --nodes,
 * --groups-per-node, --max-steal-distance, --parallel).  Returns false if the
 * option is not one of them.
 */
bool		plan_common_option(plan_env *env, int opt, const char *arg);

/* getopt_long entries for the common options; ids are >= 1000. */
#define PLAN_COMMON_LONG_OPTIONS \
	{"sysfs", required_argument, NULL, 1000}, \
	{"cpus", required_argument, NULL, 1001}, \
	{"nodes", required_argument, NULL, 1002}, \
	{"groups-per-node", required_argument, NULL, 1003}, \
	{"max-steal-distance", required_argument, NULL, 1004}, \
	{"parallel", required_argument, NULL, 1005}

/* Loads the topology and builds the plan, or fails with status 2. */
void		plan_env_load(plan_env *env);
void		plan_env_free(plan_env *env);

/* getopt_long with one-line messages and exit status 2 on bad options. */
int			plan_getopt(int argc, char **argv, const struct option *options);

/* Reads the remaining arguments: any is an error. */
void		plan_no_more_arguments(int optind, int argc, char **argv);

/* The subcommands (numasched_plan.c, plan_simulate.c, plan_bench.c, plan_bursts.c). */
int			plan_topology_main(int argc, char **argv);
int			plan_simulate_main(int argc, char **argv);
int			plan_bench_main(int argc, char **argv);
int			plan_bursts_main(int argc, char **argv);

/* The name of a node index, and a group's CPUs, for printing. */
const char *plan_cpus_text(const ns_cpuset *set);

#endif							/* PLAN_H */
