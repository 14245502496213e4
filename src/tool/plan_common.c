/*
 * plan_common.c - what every numasched-plan subcommand shares: one-line
 * errors, strict option parsing, the common options, and loading the
 * topology and plan
 */
#include "tool/plan.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
plan_fail(const char *fmt,...)
{
	va_list		ap;

	fputs("numasched-plan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(PLAN_EXIT_USAGE);
}

int
plan_int_option(const char *option, const char *value, int min, int max)
{
	char	   *end;
	long		n;

	errno = 0;
	n = strtol(value, &end, 10);
	if (value[0] == '\0' || *end != '\0' || errno == ERANGE || n < min || n > max)
		plan_fail("%s must be a whole number from %d to %d, not \"%s\"", option, min, max, value);
	return (int) n;
}

uint64_t
plan_u64_option(const char *option, const char *value)
{
	char	   *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(value, &end, 10);
	if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno == ERANGE)
		plan_fail("%s must be a whole number, not \"%s\"", option, value);
	return n;
}

bool
plan_common_option(plan_env *env, int opt, const char *arg)
{
	switch (opt)
	{
		case 1000:
			env->sysfs_root = arg;
			return true;
		case 1001:
			env->cpus_text = arg;
			return true;
		case 1002:
			env->nodes_text = arg;
			return true;
		case 1003:
			env->groups_per_node = plan_int_option("--groups-per-node", arg, 0,
												   NS_MAX_GROUPS_PER_NODE);
			return true;
		case 1004:
			env->settings.max_steal_distance = plan_int_option("--max-steal-distance", arg, 0, 255);
			if (env->settings.max_steal_distance > 0 &&
				env->settings.max_steal_distance < NS_LOCAL_DISTANCE)
				plan_fail("--max-steal-distance must be 0 (no limit) or from 10 to 255, not %s", arg);
			return true;
		case 1005:
			if (strcmp(arg, "compact") == 0)
				env->settings.parallel = NS_PARALLEL_COMPACT;
			else if (strcmp(arg, "spread") == 0)
				env->settings.parallel = NS_PARALLEL_SPREAD;
			else
				plan_fail("--parallel must be compact or spread, not \"%s\"", arg);
			return true;
	}
	return false;
}

static void
parse_list_option(const char *option, const char *text, int limit, ns_cpuset *set)
{
	char		why[128];

	if (!ns_cpuset_parse(text, strlen(text), limit, set, why, sizeof(why)))
		plan_fail("%s \"%s\" is not a list like 0-3,8: %s", option, text, why);
	if (ns_cpuset_empty(set))
		plan_fail("%s must name at least one", option);
}

void
plan_env_load(plan_env *env)
{
	char		err[NS_ERRLEN];
	ns_cpuset	cpus,
				mems,
				wanted,
				nodes;
	ns_limits	limits = {NULL, NULL};

	if (env->sysfs_root == NULL)
	{
		if (!ns_process_limits(&cpus, &mems, err, sizeof(err)))
			plan_fail("%s", err);
		limits.cpus = &cpus;
		limits.mems = &mems;
	}
	if (env->cpus_text)
	{
		parse_list_option("--cpus", env->cpus_text, NS_MAX_CPUS, &wanted);
		if (limits.cpus)
			ns_cpuset_and(&cpus, &cpus, &wanted);
		else
			cpus = wanted;
		limits.cpus = &cpus;
	}
	env->topo = ns_topology_load(env->sysfs_root ? env->sysfs_root : "/sys", &limits,
								 err, sizeof(err));
	if (env->topo == NULL)
		plan_fail("%s", err);
	if (env->nodes_text)
		parse_list_option("--nodes", env->nodes_text, NS_MAX_NODES, &nodes);
	env->plan = ns_plan_build(env->topo, env->groups_per_node,
							  env->nodes_text ? &nodes : NULL, err, sizeof(err));
	if (env->plan == NULL)
		plan_fail("%s", err);
}

void
plan_env_free(plan_env *env)
{
	ns_plan_free(env->plan);
	ns_topology_free(env->topo);
}

void
plan_no_more_arguments(int optind_now, int argc, char **argv)
{
	if (optind_now < argc)
		plan_fail("unexpected argument \"%s\" (see numasched-plan --help)", argv[optind_now]);
}

const char *
plan_cpus_text(const ns_cpuset *set)
{
	static char buf[65536];

	ns_cpuset_format(set, buf, sizeof(buf));
	return buf;
}

/* getopt_long with our own one-line messages. */
int
plan_getopt(int argc, char **argv, const struct option *options)
{
	int			opt;

	opterr = 0;
	opt = getopt_long(argc, argv, "", options, NULL);
	if (opt == '?')
	{
		if (optopt)
			plan_fail("option \"%s\" needs a value (see numasched-plan --help)", argv[optind - 1]);
		plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
	}
	if (opt == ':')
		plan_fail("option \"%s\" needs a value (see numasched-plan --help)", argv[optind - 1]);
	return opt;
}
