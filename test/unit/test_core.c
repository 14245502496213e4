/*
 * test_core.c - unit tests of the numasched core on fixture sysfs trees
 *
 *   test_core FIXTURES_DIR
 *
 * FIXTURES_DIR holds the trees written by test/fixtures/make_fixtures.py.
 * Broken trees are made here, in a temporary directory.  Output is TAP.
 */
#define _GNU_SOURCE
#include "os/ns_cpustat.h"
#include "core/ns_homing.h"
#include "core/ns_lend.h"
#include "core/ns_numa_maps.h"
#include "core/ns_policy.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fixtures;
static char scratch[4096];

static char *
fixture_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	return path;
}

static ns_topology *
load(const char *name, const ns_limits *limits)
{
	char		err[NS_ERRLEN];
	ns_topology *topo = ns_topology_load(fixture_path(name), limits, err, sizeof(err));

	if (topo == NULL)
		printf("# loading %s failed: %s\n", name, err);
	return topo;
}

static ns_plan *
plan_of(const ns_topology *topo, int groups_per_node)
{
	char		err[NS_ERRLEN];
	ns_plan    *plan = ns_plan_build(topo, groups_per_node, NULL, err, sizeof(err));

	if (plan == NULL)
		printf("# plan failed: %s\n", err);
	return plan;
}

static const char *
cpus_of(const ns_cpuset *set)
{
	static char buf[4][4096];
	static int	next;

	next = (next + 1) % 4;
	ns_cpuset_format(set, buf[next], sizeof(buf[next]));
	return buf[next];
}

static ns_cpuset
parse(const char *text)
{
	ns_cpuset	set;
	char		err[128];

	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_CPUS, &set, err, sizeof(err)))
		printf("# bad list in the test itself: %s\n", text);
	return set;
}

/* "1 2 3": the OS ids of a node's steal order */
static const char *
steal_text(const ns_plan *plan, int node_id)
{
	static char buf[256];
	const ns_topology *topo = plan->topo;
	int			n = ns_topology_node_index(topo, node_id);
	size_t		used = 0;

	buf[0] = '\0';
	for (int k = 0; k < plan->node_nsteal[n]; k++)
		used += snprintf(buf + used, sizeof(buf) - used, "%s%d", k ? " " : "",
						 topo->nodes[plan->steal[n * topo->nnodes + k]].id);
	return buf;
}

/* ---- CPU lists ---------------------------------------------------------- */

static void
test_cpulist(void)
{
	ns_cpuset	set;
	char		err[128];
	char		buf[64];

	tap_ok(ns_cpuset_parse("0-3,8,10-11\n", 12, 64, &set, err, sizeof(err)), "cpulist: kernel syntax parses");
	is_int(ns_cpuset_count(&set), 7, "cpulist: 7 members");
	is_str(cpus_of(&set), "0-3,8,10-11", "cpulist: formats back the same");
	tap_ok(ns_cpuset_parse("\n", 1, 64, &set, err, sizeof(err)) && ns_cpuset_empty(&set),
		   "cpulist: an empty file is the empty set");
	tap_ok(!ns_cpuset_parse("3-1", 3, 64, &set, err, sizeof(err)), "cpulist: backwards range refused");
	contains(err, "backwards", "cpulist: ...and says so");
	tap_ok(!ns_cpuset_parse("1,,2", 4, 64, &set, err, sizeof(err)), "cpulist: empty element refused");
	tap_ok(!ns_cpuset_parse("0-", 2, 64, &set, err, sizeof(err)), "cpulist: open range refused");
	tap_ok(!ns_cpuset_parse("x", 1, 64, &set, err, sizeof(err)), "cpulist: letters refused");
	tap_ok(!ns_cpuset_parse("64", 2, 64, &set, err, sizeof(err)), "cpulist: member at the limit refused");
	contains(err, "not below 64", "cpulist: ...naming the limit");
	tap_ok(!ns_cpuset_parse("99999999999999999999", 20, NS_MAX_CPUS, &set, err, sizeof(err)),
		   "cpulist: a huge number does not overflow");
	set = parse("0-1000");
	is_int(ns_cpuset_format(&set, buf, 4), 6, "cpulist: format reports the length it needs");
	is_str(buf, "", "cpulist: ...and writes no partial element");
	set = parse("5,7,9");
	is_int(ns_cpuset_next(&set, 6), 7, "cpulist: next member");
	is_int(ns_cpuset_next(&set, 10), -1, "cpulist: no next member");
	{
		ns_cpuset	a = parse("0-3,8"),
					b = parse("2,8-9"),
					rest;

		ns_cpuset_andnot(&rest, &a, &b);
		is_str(cpus_of(&rest), "0-1,3", "cpulist: a less b");
	}
}

/* ---- topology of real machine shapes ------------------------------------ */

static void
test_epyc(void)
{
	ns_topology *topo = load("epyc-nps1", NULL);
	ns_plan    *plan;

	if (!topo)
	{
		tap_ok(0, "epyc-nps1 loads");
		return;
	}
	is_int(topo->nnodes, 2, "nps1: two nodes");
	is_str(cpus_of(&topo->nodes[0].cpus), "0-63,128-191", "nps1: node 0 CPUs as Linux prints them");
	is_str(cpus_of(&topo->nodes[1].cpus), "64-127,192-255", "nps1: node 1 CPUs");
	is_int(topo->nodes[0].memory_kb / 1024, 262144, "nps1: node 0 memory from meminfo");
	is_int(ns_distance(topo, 0, 1), 32, "nps1: remote distance");
	plan = plan_of(topo, 0);
	is_int(plan->ngroups, 16, "nps1: automatic groups = one per 8-core L3");
	is_str(cpus_of(&plan->groups[0].cpus), "0-7,128-135", "nps1: group 0 is one CCX with its SMT siblings");
	is_str(cpus_of(&plan->groups[8].cpus), "64-71,192-199", "nps1: group 8 starts node 1");
	is_str(steal_text(plan, 0), "1", "nps1: steal order of node 0");
	ns_plan_free(plan);
	plan = plan_of(topo, 3);
	is_int(plan->groups[0].ncpus + plan->groups[1].ncpus + plan->groups[2].ncpus, 128,
		   "nps1: 3 groups cover the node");
	is_str(cpus_of(&plan->groups[0].cpus), "0-20,128-148", "nps1: 3 groups split by core, contiguous");
	is_str(cpus_of(&plan->groups[1].cpus), "21-41,149-169", "nps1: ...as even as possible");
	is_str(cpus_of(&plan->groups[2].cpus), "42-63,170-191", "nps1: ...the remainder last");
	ns_plan_free(plan);
	ns_topology_free(topo);

	topo = load("epyc-nps2", NULL);
	plan = plan_of(topo, 0);
	is_int(topo->nnodes, 4, "nps2: four nodes");
	is_str(cpus_of(&topo->nodes[1].cpus), "32-63,160-191", "nps2: node 1 CPUs");
	is_str(steal_text(plan, 0), "1 2 3", "nps2: node 0 asks its socket neighbour, then the far nodes");
	is_str(steal_text(plan, 1), "0 3 2", "nps2: node 1 asks the far nodes in rotated order");
	is_int(plan->hops[0 * 4 + 1], 1, "nps2: the socket neighbour is 1 hop");
	is_int(plan->hops[0 * 4 + 3], 2, "nps2: the other socket is farther");
	ns_plan_free(plan);
	ns_topology_free(topo);

	topo = load("epyc-nps4", NULL);
	plan = plan_of(topo, 0);
	is_int(topo->nnodes, 8, "nps4: eight nodes");
	is_str(cpus_of(&topo->nodes[7].cpus), "112-127,240-255", "nps4: node 7 CPUs");
	is_int(plan->ngroups, 16, "nps4: two L3 groups per node");
	is_str(steal_text(plan, 0), "1 2 3 4 5 6 7", "nps4: steal order of node 0");
	is_str(steal_text(plan, 1), "0 3 2 5 6 7 4", "nps4: node 1: near ties and far ties rotated");
	is_str(steal_text(plan, 2), "3 0 1 6 7 4 5", "nps4: node 2");
	is_str(steal_text(plan, 3), "2 1 0 7 4 5 6", "nps4: node 3");
	is_str(steal_text(plan, 4), "5 6 7 0 1 2 3", "nps4: node 4 asks its own socket first");
	ns_plan_free(plan);
	plan = plan_of(topo, 4);
	is_str(cpus_of(&plan->groups[0].cpus), "0-3,128-131", "nps4: 4 groups of 4 cores with siblings");
	ns_plan_free(plan);
	plan = plan_of(topo, 32);
	is_str(cpus_of(&plan->groups[1].cpus), "1", "nps4: more groups than cores splits by CPU");
	ns_plan_free(plan);
	{
		char		err[NS_ERRLEN];

		tap_ok(ns_plan_build(topo, 33, NULL, err, sizeof(err)) == NULL, "nps4: 33 groups on 32 CPUs refused");
		contains(err, "33 groups per node is more than the 32 usable CPUs of node 0",
				 "nps4: ...with a message that says why");
	}
	ns_topology_free(topo);
}

static void
test_xeon_and_big(void)
{
	ns_topology *topo = load("xeon-snc2", NULL);
	ns_plan    *plan = plan_of(topo, 0);

	is_str(cpus_of(&topo->nodes[0].cpus), "0-15,64-79", "snc2: node 0 CPUs");
	is_str(cpus_of(&topo->nodes[3].cpus), "48-63,112-127", "snc2: node 3 CPUs");
	is_int(plan->ngroups, 4, "snc2: an L3 spanning two nodes gives one group per node");
	is_str(steal_text(plan, 0), "1 2 3", "snc2: node 0 steals from its SNC sibling first");
	is_str(steal_text(plan, 2), "3 0 1", "snc2: node 2");
	is_str(steal_text(plan, 3), "2 1 0", "snc2: node 3, far ties rotated");
	ns_plan_free(plan);
	ns_topology_free(topo);

	topo = load("8x30", NULL);
	plan = plan_of(topo, 0);
	is_int(topo->nnodes, 8, "8x30: eight nodes");
	is_int(topo->nodes[5].ncpus, 60, "8x30: 60 CPUs per node");
	is_int(plan->ngroups, 8, "8x30: one L3 per socket");
	is_str(steal_text(plan, 0), "1 2 4 3 5 6 7", "8x30: node 0: 1-hop, 2-hop, 3-hop neighbours");
	is_str(steal_text(plan, 1), "3 5 0 4 7 2 6", "8x30: node 1: ties rotated");
	is_int(plan->hops[0 * 8 + 7], 3, "8x30: node 7 is three distance classes from node 0");
	ns_plan_free(plan);
	plan = plan_of(topo, 30);
	is_int(plan->ngroups, 240, "8x30: 30 groups per node");
	is_str(cpus_of(&plan->groups[31].cpus), "31,271", "8x30: a group is one core with its sibling");
	ns_plan_free(plan);
	ns_topology_free(topo);
}

static void
test_odd_machines(void)
{
	ns_topology *topo = load("cxl", NULL);
	ns_plan    *plan = plan_of(topo, 0);
	ns_cpuset	mems = parse("0-1");
	ns_limits	limits = {NULL, &mems};

	is_int(topo->nnodes, 3, "cxl: two CPU nodes and a memory node");
	tap_ok(!topo->nodes[2].has_cpus, "cxl: node 2 has no CPUs");
	is_int(topo->nodes[2].memory_kb / 1024, 262144, "cxl: node 2 memory");
	is_int(ns_distance(topo, 2, 0), 14, "cxl: distance from the memory node");
	is_str(steal_text(plan, 0), "1", "cxl: the memory node is not in any steal order");
	is_int(plan->ngroups, 2, "cxl: no group on the memory node");
	ns_plan_free(plan);
	ns_topology_free(topo);
	topo = load("cxl", &limits);
	is_int(topo->nnodes, 2, "cxl: a memory node outside Mems_allowed is dropped");
	ns_topology_free(topo);

	topo = load("sparse", NULL);
	plan = plan_of(topo, 0);
	is_int(topo->nnodes, 2, "sparse: two nodes");
	is_int(topo->nodes[1].id, 2, "sparse: the second node keeps the OS id 2");
	is_int(ns_topology_node_index(topo, 1), -1, "sparse: there is no node 1");
	is_str(cpus_of(&topo->nodes[1].cpus), "4-5,7", "sparse: offline CPU 6 is not used");
	is_int(ns_distance(topo, 0, 1), 20, "sparse: distance 0 to 2");
	is_int(plan->ngroups, 2, "sparse: no cache info, one group per node");
	{
		char		err[NS_ERRLEN];
		ns_cpuset	only = parse("1");

		tap_ok(ns_plan_build(topo, 0, &only, err, sizeof(err)) == NULL, "sparse: nodes=1 refused");
		contains(err, "node 1 does not exist", "sparse: ...naming the node");
		only = parse("2");
		ns_plan_free(plan);
		plan = ns_plan_build(topo, 0, &only, err, sizeof(err));
		is_int(plan ? plan->ngroups : -1, 1, "sparse: nodes=2 uses node 2 only");
	}
	ns_plan_free(plan);
	ns_topology_free(topo);

	topo = load("tiny", NULL);
	plan = plan_of(topo, 2);
	is_int(plan->ngroups, 2, "tiny: two groups on two CPUs");
	is_str(cpus_of(&plan->groups[1].cpus), "1", "tiny: group 1 is CPU 1");
	is_str(steal_text(plan, 0), "", "tiny: nothing to steal from");
	ns_plan_free(plan);
	ns_topology_free(topo);

	{
		ns_cpuset	cpus = parse("0-7,128-135,16-23");
		ns_limits	cpuset = {&cpus, NULL};

		topo = load("epyc-nps4", &cpuset);
		plan = plan_of(topo, 0);
		is_int(topo->nnodes, 2, "cpuset: only nodes with allowed CPUs remain");
		is_str(cpus_of(&topo->nodes[0].cpus), "0-7,128-135", "cpuset: node 0 restricted");
		is_str(cpus_of(&topo->nodes[1].cpus), "16-23", "cpuset: node 1 restricted");
		is_int(plan->ngroups, 2, "cpuset: one group per node (one L3 each is left)");
		is_str(steal_text(plan, 1), "0", "cpuset: steal order only among allowed nodes");
		ns_plan_free(plan);
		ns_topology_free(topo);
	}
}

/* ---- broken trees -------------------------------------------------------- */

static void
write_file(const char *rel, const char *text)
{
	char		path[8192];
	char	   *slash;
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", scratch, rel);
	for (slash = strchr(path + strlen(scratch) + 1, '/'); slash; slash = strchr(slash + 1, '/'))
	{
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void
good_tree(void)
{
	char		cmd[8300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", scratch, scratch);
	if (system(cmd) != 0)
		printf("# could not reset %s\n", scratch);
	write_file("devices/system/cpu/online", "0-3\n");
	write_file("devices/system/node/node0/cpulist", "0-1\n");
	write_file("devices/system/node/node0/distance", "10 20\n");
	write_file("devices/system/node/node0/meminfo", "Node 0 MemTotal:       1024 kB\n");
	write_file("devices/system/node/node1/cpulist", "2-3\n");
	write_file("devices/system/node/node1/distance", "20 10\n");
	write_file("devices/system/node/node1/meminfo", "Node 1 MemTotal:       1024 kB\n");
}

/* Loading the scratch tree fails with a message containing "want". */
static void
fails_with(const char *what, const char *want)
{
	char		err[NS_ERRLEN] = "";
	ns_topology *topo = ns_topology_load(scratch, NULL, err, sizeof(err));

	tap_ok(topo == NULL, "broken tree refused: %s", what);
	contains(err, want, "...the message names it: %s", what);
	ns_topology_free(topo);
}

static void
test_broken_trees(void)
{
	char		err[NS_ERRLEN];
	ns_topology *topo;

	good_tree();
	topo = ns_topology_load(scratch, NULL, err, sizeof(err));
	tap_ok(topo != NULL && topo->nnodes == 2, "the hand-made tree loads");
	ns_topology_free(topo);

	topo = ns_topology_load("/nonexistent/sysfs", NULL, err, sizeof(err));
	tap_ok(topo == NULL, "a missing sysfs root is refused");
	contains(err, "/nonexistent/sysfs/devices/system/cpu/online", "...naming the file");

	write_file("devices/system/node/node1/cpulist", "2-\n");
	fails_with("open range in a node's cpulist", "node1/cpulist");
	good_tree();
	write_file("devices/system/node/node1/cpulist", "1-3\n");
	fails_with("a CPU in two nodes", "CPU 1 is also listed by another node");
	good_tree();
	write_file("devices/system/node/node0/distance", "10\n");
	fails_with("too few distances", "node0/distance");
	good_tree();
	write_file("devices/system/node/node0/distance", "10 20 30\n");
	fails_with("too many distances", "expected 2 distances");
	good_tree();
	write_file("devices/system/node/node1/distance", "20 ten\n");
	fails_with("a word in the distance file", "node1/distance");
	good_tree();
	write_file("devices/system/node/node1/distance", "20 300\n");
	fails_with("a distance above 255", "from 1 to 255");
	good_tree();
	write_file("devices/system/node/node0/meminfo", "Node 0 MemFree: 5 kB\n");
	fails_with("meminfo without MemTotal", "node0/meminfo");
	good_tree();
	write_file("devices/system/node/node0/meminfo", "Node 0 MemTotal: lots\n");
	fails_with("MemTotal not a number", "MemTotal is not a number");
	good_tree();
	write_file("devices/system/cpu/online", "0-9000\n");
	fails_with("a CPU number beyond the supported maximum", "not below 8192");
	good_tree();
	write_file("devices/system/cpu/online", "");
	fails_with("no CPU online", "no CPU is online");
	good_tree();
	write_file("devices/system/node/node99999/cpulist", "\n");
	fails_with("a node id beyond the supported maximum", "node99999");
	good_tree();
	/* one digit more than the limit's, the last read after the check */
	write_file("devices/system/node/node1024/cpulist", "\n");
	fails_with("node id 1024, the first beyond the maximum", "node1024");
	good_tree();
	write_file("devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "2-3\n");
	fails_with("an LLC list without the CPU itself", "does not contain CPU 0");
	good_tree();
	write_file("devices/system/cpu/cpu0/topology/thread_siblings_list", "0,2\n");
	write_file("devices/system/cpu/cpu1/topology/thread_siblings_list", "1-2\n");
	fails_with("siblings that disagree", "also in another domain");

	/* found by fuzz_sysfs: a sibling list spanning two nodes */
	good_tree();
	write_file("devices/system/cpu/cpu0/topology/thread_siblings_list", "0-3\n");
	topo = ns_topology_load(scratch, NULL, err, sizeof(err));
	{
		ns_plan    *plan = topo ? ns_plan_build(topo, 2, NULL, err, sizeof(err)) : NULL;
		ns_cpuset	all;

		ns_cpuset_zero(&all);
		for (int g = 0; plan && g < plan->ngroups; g++)
			ns_cpuset_or(&all, &all, &plan->groups[g].cpus);
		tap_ok(plan && plan->ngroups == 4 && ns_cpuset_count(&all) == 4 &&
			   plan->groups[2].ncpus == 1 && plan->groups[3].ncpus == 1,
			   "siblings spanning nodes: every CPU in exactly one group");
		ns_plan_free(plan);
	}
	ns_topology_free(topo);

	good_tree();
	{
		char		cmd[8300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/devices/system/node'", scratch);
		if (system(cmd) != 0)
			printf("# rm failed\n");
	}
	topo = ns_topology_load(scratch, NULL, err, sizeof(err));
	tap_ok(topo && topo->nnodes == 1 && topo->nodes[0].ncpus == 4,
		   "a kernel without NUMA is one node with every online CPU");
	ns_topology_free(topo);
}

/* ---- placement ----------------------------------------------------------- */

static void
fill_node(const ns_plan *plan, ns_loads *loads, int node)
{
	for (int g = plan->node_first_group[node];
		 g < plan->node_first_group[node] + plan->node_ngroups[node]; g++)
		ns_loads_add(plan, loads, g, plan->groups[g].ncpus * NS_CPU_LOAD - loads->group[g]);
}

static int
place(const ns_plan *plan, const ns_loads *loads, const ns_settings *settings,
	  bool worker, int home, int previous, int leader, int number, ns_placement *where)
{
	ns_request	req = {worker, home, previous, leader, number, NULL, NULL, -1};

	ns_place(plan, loads, settings, &req, where);
	return where->group;
}

static void
test_placement(void)
{
	ns_topology *topo = load("epyc-nps4", NULL);
	ns_plan    *plan = plan_of(topo, 0);	/* 2 groups of 16 CPUs per node */
	ns_loads	loads;
	ns_settings s;
	ns_placement w;

	ns_settings_default(&s);
	ns_loads_alloc(plan, &loads);

	is_int(place(plan, &loads, &s, false, -1, -1, -1, 0, &w), 0, "place: idle machine, first group");
	{
		ns_request	req = {false, -1, -1, -1, 0, NULL, NULL, ns_cpuset_next(&plan->groups[5].cpus, 0)};

		ns_place(plan, &loads, &s, &req, &w);
		is_int(w.node, 2, "place: loads tie, a backend stays on the node it runs on (node 2's CPU)");
		ns_loads_add(plan, &loads, 4, 1000);
		ns_place(plan, &loads, &s, &req, &w);
		is_int(w.node, 0, "place: ...but not where its node is busier");
		ns_loads_add(plan, &loads, 4, -1000);
	}
	ns_loads_add(plan, &loads, 0, 5000);
	is_int(place(plan, &loads, &s, false, -1, -1, -1, 0, &w), 2,
		   "place: a new backend goes to the least-loaded node");
	is_int(place(plan, &loads, &s, false, 0, -1, -1, 0, &w), 1,
		   "place: with home node 0, its least-loaded group");
	is_int(w.hops, 0, "place: ...on the home node");
	is_int(place(plan, &loads, &s, false, -1, 0, -1, 0, &w), 0,
		   "place: previous group kept while it has room");
	s.prefer_previous = false;
	is_int(place(plan, &loads, &s, false, -1, 0, -1, 0, &w), 1,
		   "place: prefer_previous off takes the least-loaded group of that node");
	s.prefer_previous = true;
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 0, "compact: worker joins its leader's group");

	fill_node(plan, &loads, 0);
	is_int(loads.node_room[0], 0, "loads: a full node has no group with room");
	is_int(place(plan, &loads, &s, false, -1, 0, -1, 0, &w), 2,
		   "place: previous group full and its node full: nearest node");
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 2,
		   "compact: leader's node full, worker goes to the nearest node (distance 11)");
	is_int(w.hops, 1, "compact: ...one hop");
	fill_node(plan, &loads, 1);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 4,
		   "compact: nodes 0 and 1 full, next is node 2 (distance 12)");
	is_int(place(plan, &loads, &s, true, -1, -1, 2, 0, &w), 6,
		   "compact: from node 1 the rotated tie asks node 3 first");
	fill_node(plan, &loads, 2);
	fill_node(plan, &loads, 3);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 8,
		   "compact: socket full, node 0 spills to node 4");
	is_int(place(plan, &loads, &s, true, -1, -1, 2, 0, &w), 10,
		   "compact: ...and node 1 to node 5, not everybody to node 4");
	is_int(w.hops, 3, "compact: the other socket is the third distance class");
	s.max_steal_distance = 12;
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 0,
		   "max distance 12: all in reach full, weighted choice stays home");
	ns_loads_add(plan, &loads, 5, -16000);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 5,
		   "max distance 12: ...unless a group in reach has room");
	ns_loads_add(plan, &loads, 5, 16000);
	s.max_steal_distance = 0;
	for (int g = 8; g < 16; g++)
		ns_loads_add(plan, &loads, g, 16000);
	ns_loads_add(plan, &loads, 3, 8000);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 0,
		   "all full: the home node wins among equal loads");
	for (int g = 8; g < 16; g++)
		ns_loads_add(plan, &loads, g, -16000);
	ns_loads_add(plan, &loads, 8, 16000);
	ns_loads_add(plan, &loads, 9, 8000);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 9,
		   "socket full, node 4 half full: the spill goes to node 4's group with room");
	ns_loads_add(plan, &loads, 9, 8000);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 10,
		   "node 4 full too: the next in steal order, node 5");

	ns_loads_reset(plan, &loads);
	s.parallel = NS_PARALLEL_SPREAD;
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 2, "spread: worker 0 on the nearest other node");
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 1, &w), 4, "spread: worker 1 on the next node");
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 6, &w), 14, "spread: worker 6 on node 7");
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 7, &w), 0, "spread: worker 7 back on the leader's node");
	s.max_steal_distance = 12;
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 3, &w), 0,
		   "spread: within distance 12 the fourth worker wraps to the leader's node");
	fill_node(plan, &loads, 1);
	is_int(place(plan, &loads, &s, true, -1, -1, 0, 0, &w), 4, "spread: a full node is skipped");
	ns_loads_free(&loads);
	ns_plan_free(plan);
	ns_topology_free(topo);

	/* unequal CPU counts compare by load per CPU */
	topo = load("sparse", NULL);
	plan = plan_of(topo, 0);
	ns_loads_alloc(plan, &loads);
	s.max_steal_distance = 0;
	ns_loads_add(plan, &loads, 0, 3000);	/* 0.75 per CPU on 4 CPUs */
	ns_loads_add(plan, &loads, 1, 2000);	/* 0.67 per CPU on 3 CPUs */
	is_int(place(plan, &loads, &s, false, -1, -1, -1, 0, &w), 1, "place: load is compared per CPU");
	ns_loads_add(plan, &loads, 1, 2000);
	is_int(loads.node_room[1], 0, "loads: 4000 on 3 CPUs is full");
	ns_loads_add(plan, &loads, 1, -999);
	is_int(loads.node_room[1], 0, "loads: 3001 on 3 CPUs is full");
	ns_loads_add(plan, &loads, 1, -1);
	is_int(loads.node_room[1], 0, "loads: 3000 on 3 CPUs is full (room means below)");
	ns_loads_add(plan, &loads, 1, -1);
	is_int(loads.node_room[1], 1, "loads: 2999 has room");
	ns_loads_add(plan, &loads, 1, -100000);
	is_int(loads.group[1], 0, "loads: removing more than was added stops at zero");
	is_int(loads.node[1], 0, "loads: ...and so does the node's load");
	ns_loads_free(&loads);
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- moves to another node only when they pay ------------------------------ */

static int
cross_node_moves(const ns_plan *plan, const ns_settings *s, int nprocs)
{
	ns_proc		procs[64];
	ns_move		moves[64];
	int			n,
				cross = 0;

	for (int i = 0; i < nprocs; i++)
		procs[i] = (ns_proc) {0, 1000, 0, -1, NULL};
	n = ns_rebalance(plan, s, procs, nprocs, 1, moves, 64);
	for (int m = 0; m < n; m++)
		cross += plan->groups[moves[m].to_group].node != plan->groups[moves[m].from_group].node;
	return cross;
}

static void
test_cross_node_rule(void)
{
	ns_topology *topo = load("cxl", NULL);
	ns_plan    *plan = plan_of(topo, 1);	/* group 0: node 0, group 1: node 1, 16 CPUs each */
	ns_settings s;

	ns_settings_default(&s);
	s.max_moves = 64;
	tap_ok(s.cross_node_only_when_waiting, "cross-node rule: when waiting by default");
	is_int(cross_node_moves(plan, &s, 10), 0,
		   "cross-node rule: 10 busy processes on 16 CPUs all run: none leaves its node");
	is_int(cross_node_moves(plan, &s, 20), 0,
		   "cross-node rule: 20 on 16 CPUs (1.25 per CPU) wait no more than the threshold: none moves");
	is_int(cross_node_moves(plan, &s, 24), 4,
		   "cross-node rule: 24 on 16 CPUs wait: 4 move, until 1.25 per CPU are left");
	s.cross_node_only_when_waiting = false;
	is_int(cross_node_moves(plan, &s, 10), 3,
		   "by imbalance: 10 on 16 CPUs against an idle node: 3 move (gap 0.625 down to 0.25)");
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- lending a CPU at a statement's start ------------------------------------ */

static void
test_statement_lending(void)
{
	ns_topology *topo = load("epyc-nps2", NULL);
	ns_plan    *plan = plan_of(topo, 2);	/* 2 groups of 32 CPUs per node; node 0-1 and 2-3 near (12) */
	ns_settings s;
	uint32_t	running[8] = {31, 32, 32, 32, 32, 32, 32, 32};
	ns_cpuset	reach;

	ns_settings_default(&s);
	tap_ok(plan && plan->ngroups == 8, "statement lending: a plan of 8 groups");
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 0,
		   "statement lending: a statement runs at home while one of its group's CPUs runs none");
	running[0] = 32;
	running[3] = 0;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 0,
		   "statement lending: its group full, it would wait a 32nd of a statement at home: it stays (an idle group elsewhere)");
	running[0] = 64;
	running[1] = 31;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 1,
		   "statement lending: a wait of a statement at home (65 on 32), the other group of its node first (no wait), before an idler one of another node");
	{
		uint32_t	away[8] = {0, 10, 0, 0, 0, 0, 0, 0};

		tap_ok(ns_lend_statement(plan, &s, running, away, 0, NULL) == 3,
			   "statement lending: a group's own statements lent CPUs elsewhere count there (group 1: 31 + 10 away), so it goes to group 3");
	}
	running[1] = 40;
	running[2] = 30;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 3,
		   "statement lending: its node's other group busy too (41), the group of the nearest node with the shortest wait");
	running[2] = running[3] = running[4] = running[5] = 40;
	running[6] = 0;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 6,
		   "statement lending: with the near node busy too, a far one");
	s.max_steal_distance = 12;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 0,
		   "statement lending: never beyond max_steal_distance (12: node 0 reaches node 1 only)");
	s.max_steal_distance = 0;
	ns_cpuset_zero(&reach);
	ns_cpuset_set(&reach, 0);
	ns_cpuset_set(&reach, 1);
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, &reach) == 0,
		   "statement lending: never outside its class's reach (groups 0 and 1)");
	running[1] = 33;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, &reach) == 0,
		   "statement lending: a wait less than a statement shorter elsewhere keeps it home (33/32 at home, 2/32 there)");
	running[0] = 65;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, &reach) == 1,
		   "statement lending: ...one a statement shorter moves it (34/32 against 2/32)");

	plan->groups_share_node = true;
	memset(running, 0, sizeof(running));
	running[0] = 40;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 0,
		   "statement lending, groups sharing their node: at home while its node has a CPU free (40 of 64 busy, all in its group)");
	running[1] = 24;
	running[2] = 1;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 0,
		   "statement lending, groups sharing their node: its node just full (65 on 64), at home");
	running[1] = 88;
	tap_ok(ns_lend_statement(plan, &s, running, NULL, 0, NULL) == 3,
		   "statement lending, groups sharing their node: two per CPU at home, the nearest node's group with the most of its own CPUs free");
	{
		int			first,
					ngroups,
					cpus;

		ns_lend_unit(plan, 3, &first, &ngroups, &cpus);
		tap_ok(first == 2 && ngroups == 2 && cpus == 64,
			   "statement lending, groups sharing their node: group 3 counts with its node's groups (2 and 3, 64 CPUs)");
		plan->groups_share_node = false;
		ns_lend_unit(plan, 3, &first, &ngroups, &cpus);
		tap_ok(first == 3 && ngroups == 1 && cpus == 32, "statement lending, strict: group 3 counts alone (32 CPUs)");
	}
	plan->groups_share_node = false;
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- lending idle CPUs ----------------------------------------------------- */

/*
 * One tick of 10 ms; idle per group in ms; "waited": each group without an
 * idle CPU had its processes wait 5 ms (else none waited).
 */
static int
lend_tick(const ns_plan *plan, const ns_settings *s, ns_lending *l, bool waited,
		  const int *idle_ms, int *changed)
{
	uint64_t	idle_us[64] = {0};
	uint64_t	waited_us[64] = {0};
	ns_lend_sample sample = {idle_us, waited_us};

	for (int g = 0; g < plan->ngroups; g++)
	{
		idle_us[g] = (uint64_t) idle_ms[g] * 1000;
		waited_us[g] = waited && idle_ms[g] == 0 ? 5000 : 0;
	}
	return ns_lend_tick(plan, s, &sample, 10000, l, changed);
}

static void
test_lending(void)
{
	ns_topology *topo = load("epyc-nps2", NULL);
	ns_plan    *plan = plan_of(topo, 2);	/* 2 groups of 32 CPUs per node; node 0-1 and 2-3 near (12) */
	ns_settings s;
	ns_lending	l;
	int			changed[64];
	int			n;

	ns_settings_default(&s);
	tap_ok(plan && plan->ngroups == 8 && ns_lending_alloc(plan->ngroups, &l), "lending: a plan of 8 groups");

	{
		int			idle[8] = {0, 10, 320, 320, 320, 320, 320, 320};

		n = lend_tick(plan, &s, &l, false, idle, changed);
		tap_ok(n == 0 && l.lender[0] < 0, "lending: no work waited, nothing is lent");
		{
			uint64_t	idle_us[8] = {0, 10000, 320000, 320000, 320000, 320000, 320000, 320000};
			uint64_t	waited_us[8] = {900, 0, 0, 0, 0, 0, 0, 0};
			ns_lend_sample sample = {idle_us, waited_us};

			n = ns_lend_tick(plan, &s, &sample, 10000, &l, changed);
			tap_ok(n == 0, "lending: a busy group whose processes waited under a tenth of the tick borrows nothing");
		}
		n = lend_tick(plan, &s, &l, true, idle, changed);
		tap_ok(n == 1 && changed[0] == 0 && l.lender[0] == 1,
			   "lending: group 0, busy while its work waits, borrows group 1 of its own node before the idler groups of other nodes");
	}
	{
		int			idle[8] = {0, 0, 0, 0, 0, 0, 0, 300};

		ns_lending_reset(&l);
		n = lend_tick(plan, &s, &l, true, idle, changed);
		tap_ok(n == 7 && l.lender[0] == 7 && l.lender[6] == 7,
			   "lending: with everything near busy, each busy group borrows the one idle group, far or near");
		s.max_steal_distance = 12;
		ns_lending_reset(&l);
		n = lend_tick(plan, &s, &l, true, idle, changed);
		tap_ok(n == 3 && l.lender[0] < 0 && l.lender[4] == 7 && l.lender[6] == 7,
			   "lending: never beyond max_steal_distance (12: only nodes 2 and 3 reach group 7)");
		s.max_steal_distance = 0;
	}
	{
		int			busy[8] = {0, 10, 320, 320, 320, 320, 320, 320};
		int			back[8] = {10, 0, 320, 320, 320, 320, 320, 320};

		ns_lending_reset(&l);
		lend_tick(plan, &s, &l, true, busy, changed);
		n = lend_tick(plan, &s, &l, true, back, changed);
		tap_ok(l.lender[0] == 1 && l.lender[1] == 0,
			   "lending: between two groups of one node it goes both ways when the lender's work waits too");
		{
			int			both[8] = {0, 0, 320, 320, 320, 320, 320, 320};

			n = lend_tick(plan, &s, &l, true, both, changed);
			tap_ok(l.lender[0] == 2 && l.lender[1] == 2,
				   "lending: borrowers still waiting while their lenders have no idle CPU turn to the idle group of the nearest node");
		}
	}
	{
		/* group 0 (node 0) borrows group 2 (node 1), then group 2's work waits */
		uint64_t	idle_us[8] = {0, 0, 10000, 0, 0, 0, 0, 0};
		uint64_t	waited_us[8] = {5000, 0, 0, 0, 0, 0, 0, 0};
		ns_lend_sample sample = {idle_us, waited_us};

		ns_lending_reset(&l);
		(void) ns_lend_tick(plan, &s, &sample, 10000, &l, changed);
		tap_ok(l.lender[0] == 2, "lending: with its own node busy, group 0 borrows group 2 of the nearest node");
		memset(idle_us, 0, sizeof(idle_us));
		memset(waited_us, 0, sizeof(waited_us));
		idle_us[0] = 10000;
		waited_us[2] = 5000;
		(void) ns_lend_tick(plan, &s, &sample, 10000, &l, changed);
		tap_ok(l.lender[0] < 0 && l.lender[2] == 0,
			   "lending: between nodes, when the lender's work waits and its borrower has an idle CPU, lending turns round (never both ways at once)");
	}
	{
		int			busy[8] = {0, 10, 320, 320, 320, 320, 320, 320};
		int			some[8] = {0, 50, 320, 320, 320, 320, 320, 320};	/* 5 of 64 CPUs idle */
		int			spare[8] = {320, 320, 320, 320, 320, 320, 320, 320};
		int			ticks = 0;

		ns_lending_reset(&l);
		lend_tick(plan, &s, &l, true, busy, changed);
		for (int i = 0; i < 100; i++)
			lend_tick(plan, &s, &l, true, some, changed);
		tap_ok(l.lender[0] == 1, "lending: kept while it and its lender leave less than a lender's worth idle");
		do
		{
			n = lend_tick(plan, &s, &l, false, spare, changed);
			ticks++;
		} while (n == 0 && ticks < 100);
		tap_ok(n == 1 && changed[0] == 0 && l.lender[0] < 0 && ticks * 10000 <= NS_LEND_RETURN_WINDOW_US,
			   "lending: given back once the two left a lender's worth of CPU idle for a window (%d ticks)", ticks);
	}
	{
		/*
		 * One node in two groups lending to each other: both give back at
		 * the end of their window, and group 0, waiting, borrows group 1
		 * again in the same tick.  changed[] has room for the groups, and
		 * each is written once (a third entry overran it, and the heap).
		 */
		ns_topology *tiny = load("tiny", NULL);
		ns_plan    *two = plan_of(tiny, 2);
		ns_lending	both;
		int			changed2[2];
		uint64_t	idle_us[2] = {0, 10000};
		uint64_t	waited_us[2] = {5000, 0};
		ns_lend_sample sample = {idle_us, waited_us};

		tap_ok(two && two->ngroups == 2 && ns_lending_alloc(2, &both), "lending: one node in two groups");
		both.lender[0] = 1;
		both.lender[1] = 0;
		for (int g = 0; g < 2; g++)
		{
			both.spare_us[g] = NS_LEND_RETURN_WINDOW_US;
			both.window_us[g] = NS_LEND_RETURN_WINDOW_US - 10000;
		}
		n = ns_lend_tick(two, &s, &sample, 10000, &both, changed2);
		tap_ok(n == 2 && both.lender[0] == 1 && both.lender[1] < 0,
			   "lending: a group that gives back and borrows again in one tick is written to changed[] once (%d entries)", n);
		ns_lending_free(&both);
		ns_plan_free(two);
		ns_topology_free(tiny);
	}
	{
		/* the groups of a node share its CPUs (numasched.group_binding = preferred) */
		int			half[8] = {0, 10, 320, 320, 320, 320, 320, 320};
		int			node_busy[8] = {0, 0, 320, 320, 320, 320, 320, 320};
		uint64_t	idle_us[8] = {0, 10000, 0, 0, 0, 0, 0, 0};
		uint64_t	waited_us[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		ns_lend_sample sample = {idle_us, waited_us};

		plan->groups_share_node = true;
		ns_lending_reset(&l);
		n = lend_tick(plan, &s, &l, true, half, changed);
		tap_ok(n == 0 && l.lender[0] < 0,
			   "lending, groups sharing their node: group 0 waits while group 1 of its node idles: nothing lent (the kernel has the CPU already)");
		n = lend_tick(plan, &s, &l, true, node_busy, changed);
		tap_ok(n == 2 && l.lender[0] == 2 && l.lender[1] == 2,
			   "lending, groups sharing their node: its whole node busy, each group borrows the idle group of the nearest node");
		waited_us[2] = 5000;
		idle_us[2] = 0;
		(void) ns_lend_tick(plan, &s, &sample, 10000, &l, changed);
		tap_ok(l.lender[0] < 0 && l.lender[1] < 0 && l.lender[2] == 1,
			   "lending, groups sharing their node: turns round once the lender's work waits and its borrowers' node has a CPU idle (group 1's)");
		plan->groups_share_node = false;
	}
	{
		ns_cpuset	cpus;
		ns_cpuset	node0;
		ns_cpuset	home;

		ns_cpuset_or(&node0, &plan->groups[0].cpus, &plan->groups[1].cpus);
		ns_home_cpus(plan, 0, NULL, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &plan->groups[0].cpus), "home CPUs, strict: its group's");
		plan->groups_share_node = true;
		ns_home_cpus(plan, 0, NULL, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &node0), "home CPUs, groups sharing their node: its node's");
		ns_cpuset_zero(&home);
		ns_cpuset_set(&home, 0);
		ns_cpuset_set(&home, 4);
		ns_home_cpus(plan, 0, &home, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &plan->groups[0].cpus),
			   "home CPUs, groups sharing their node: only its class's groups of its node (0 and 4 of another node: group 0's)");
		ns_home_cpus(plan, 1, &home, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &node0), "home CPUs: a process spilled out of its class's groups keeps its own group's besides");
		plan->groups_share_node = false;
	}
	{
		ns_cpuset	cpus;
		ns_cpuset	want;
		ns_cpuset	reach;
		ns_cpuset	everything;

		ns_cpuset_zero(&everything);
		for (int g = 0; g < plan->ngroups; g++)
			ns_cpuset_or(&everything, &everything, &plan->groups[g].cpus);
		plan->groups_share_node = true;
		ns_bound_cpus(plan, &s, 0, NULL, NULL, false, &cpus);
		ns_cpuset_or(&want, &plan->groups[0].cpus, &plan->groups[1].cpus);
		tap_ok(ns_cpuset_equal(&cpus, &want), "bound CPUs, nodes strict: its node's");
		plan->nodes_shared = true;
		ns_bound_cpus(plan, &s, 0, NULL, NULL, false, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &everything), "bound CPUs, nodes shared: every node's (no steal limit)");
		s.max_steal_distance = 12;
		ns_bound_cpus(plan, &s, 0, NULL, NULL, false, &cpus);
		for (int g = 2; g < 4; g++)
			ns_cpuset_or(&want, &want, &plan->groups[g].cpus);
		tap_ok(ns_cpuset_equal(&cpus, &want), "bound CPUs, nodes shared: the nodes within max_steal_distance (0 and 1)");
		s.max_steal_distance = 0;
		ns_cpuset_zero(&reach);
		ns_cpuset_set(&reach, 0);
		ns_cpuset_set(&reach, 6);
		ns_bound_cpus(plan, &s, 0, &reach, &reach, false, &cpus);
		ns_cpuset_or(&want, &plan->groups[0].cpus, &plan->groups[6].cpus);
		tap_ok(ns_cpuset_equal(&cpus, &want), "bound CPUs, nodes shared: its class's groups, on its node and the others");
		plan->groups_share_node = false;
		ns_bound_cpus(plan, &s, 0, NULL, NULL, false, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &plan->groups[0].cpus),
			   "bound CPUs, nodes shared but groups strict: its group's (strict wins)");
		plan->nodes_shared = false;
		ns_bound_cpus(plan, &s, 0, NULL, NULL, true, &cpus);
		tap_ok(ns_cpuset_equal(&cpus, &everything), "bound CPUs, background or under the companion: its reach");
	}
	{
		char		stat[] = "cpu  10 0 10 500 5 0 0 0 0 0\n"
			"cpu0 5 0 5 300 2 0 0 0 0 0\ncpu2 5 0 5 200 3 0 0 0 0 0\nintr 12 0 0\n";
		uint64_t	idle_us[4] = {7, 7, 7, 7};
		uint64_t	total = 0;

		tap_ok(ns_parse_stat_idle(stat, idle_us, 4, 100) && idle_us[0] == 3020000 &&
			   idle_us[1] == 7 && idle_us[2] == 2030000,
			   "cpustat: idle and iowait per CPU, in microseconds; an offline CPU left as it was");
		tap_ok(!ns_parse_stat_idle("cpu0 x\n", idle_us, 4, 100), "cpustat: a malformed line is refused");
		tap_ok(ns_parse_pressure_some("some avg10=0.00 avg60=0.00 avg300=0.00 total=123456\n"
									  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &total) &&
			   total == 123456, "cpustat: PSI's some total");
		tap_ok(!ns_parse_pressure_some("full avg10=0.00 total=5\n", &total), "cpustat: no some line refused");
	}
	ns_lending_free(&l);
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- workload classes ---------------------------------------------------- */

static int
place_in(const ns_plan *plan, const ns_loads *loads, const ns_settings *settings,
		 bool worker, int leader, const ns_cpuset *home, const ns_cpuset *reach)
{
	ns_request	req = {worker, -1, -1, leader, 0, home, reach, -1};
	ns_placement where;

	ns_place(plan, loads, settings, &req, &where);
	return where.group;
}

static void
test_classes(void)
{
	ns_topology *topo = load("epyc-nps4", NULL);
	ns_plan    *plan = plan_of(topo, 0);	/* groups 2n, 2n+1 on node n */
	ns_loads	loads;
	ns_settings s;
	ns_cpuset	home,
				reach,
				nowhere,
				allowed;
	ns_proc		procs[4];
	ns_move		moves[8];
	int			n;
	bool		outside = false;

	ns_settings_default(&s);
	ns_loads_alloc(plan, &loads);
	ns_cpuset_zero(&home);
	ns_cpuset_set(&home, 4);
	ns_cpuset_set(&home, 5);
	reach = home;
	ns_cpuset_set(&reach, 6);
	ns_cpuset_set(&reach, 7);
	ns_cpuset_zero(&nowhere);
	ns_cpuset_set(&nowhere, 99);

	is_int(place_in(plan, &loads, &s, false, -1, &home, &reach), 4,
		   "class: an idle machine places a session in its class's first group");
	ns_loads_add(plan, &loads, 4, 3000);
	is_int(place_in(plan, &loads, &s, false, -1, &home, &reach), 5,
		   "class: then in its least loaded group");
	is_int(place_in(plan, &loads, &s, false, -1, NULL, NULL), 0,
		   "class: a session without a class is placed as before");
	fill_node(plan, &loads, 2);
	is_int(place_in(plan, &loads, &s, false, -1, &home, &reach), 6,
		   "class: its groups full, spill = nearest takes the nearest group it may spill to");
	is_int(place_in(plan, &loads, &s, false, -1, &home, &home), 4,
		   "class: spill = never stays in its groups however loaded");
	is_int(place_in(plan, &loads, &s, true, 0, &home, &home), 4,
		   "class: a worker whose leader runs outside its class stays in the class");
	ns_loads_reset(plan, &loads);
	is_int(place_in(plan, &loads, &s, true, 4, &home, &home), 4,
		   "class: a worker joins its leader's group when it is in the class");
	is_int(place_in(plan, &loads, &s, false, -1, &nowhere, &nowhere), 0,
		   "class: a class with no group in the plan places as if it had none");
	tap_ok(place_in(plan, &loads, &s, true, 4, &nowhere, &nowhere) >= 0,
		   "class: ...also a worker whose leader's group gives its home");

	/* group 4 overloaded; its processes may go to group 6 only, not to 5 */
	ns_cpuset_zero(&allowed);
	ns_cpuset_set(&allowed, 4);
	ns_cpuset_set(&allowed, 6);
	for (int i = 0; i < 4; i++)
		procs[i] = (ns_proc) {4, 8000, 0, -1, &allowed};
	n = ns_rebalance(plan, &s, procs, 4, 1, moves, 8);
	for (int m = 0; m < n; m++)
		outside |= moves[m].to_group != 6;
	tap_ok(n > 0 && !outside, "class: the rebalancer moves a class's processes only into its groups");
	for (int i = 0; i < 4; i++)
		procs[i] = (ns_proc) {4, 8000, 0, -1, &home};
	n = ns_rebalance(plan, &s, procs, 4, 1, moves, 8);
	is_int(n, 2, "class: inside the class, the idle group of the same node takes two of four");
	is_int(moves[0].to_group == 5 && moves[1].to_group == 5, 1, "class: ...group 5 both");
	for (int i = 0; i < 4; i++)
		procs[i] = (ns_proc) {4, 8000, 0, -1, NULL};
	n = ns_rebalance(plan, &s, procs, 4, 1, moves, 8);
	is_int(n > 0 ? moves[0].to_group : -1, 5, "class: without one, the same node's idle group first as before");
	ns_loads_free(&loads);
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- rebalance ----------------------------------------------------------- */

static void
test_rebalance(void)
{
	ns_topology *topo = load("tiny", NULL);
	ns_plan    *plan = plan_of(topo, 2);
	ns_settings s;
	ns_move		moves[16];
	ns_proc		procs[64];
	int			n;

	ns_settings_default(&s);
	procs[0] = (ns_proc) {0, 1000, 0, -1, NULL};
	procs[1] = (ns_proc) {0, 1000, 0, -1, NULL};
	n = ns_rebalance(plan, &s, procs, 2, 1, moves, 16);
	is_int(n, 1, "rebalance: two busy processes in one group, one moves");
	is_int(moves[0].to_group, 1, "rebalance: ...to the idle group");
	is_int(procs[moves[0].proc].group, 1, "rebalance: ...and the proc says so");
	is_int(ns_rebalance(plan, &s, procs, 2, 2, moves, 16), 0, "rebalance: balanced now, nothing moves");

	procs[0] = (ns_proc) {0, 1000, 0, -1, NULL};
	n = ns_rebalance(plan, &s, procs, 1, 3, moves, 16);
	is_int(n, 0, "hysteresis: a move that only turns the imbalance around is not made");

	procs[0] = (ns_proc) {0, 1000, 1, -1, NULL};
	procs[1] = (ns_proc) {0, 1000, 1, -1, NULL};
	procs[2] = (ns_proc) {0, 1000, 1, -1, NULL};
	is_int(ns_rebalance(plan, &s, procs, 3, 3, moves, 16), 0,
		   "hysteresis: processes moved two passes ago stay put");
	is_int(ns_rebalance(plan, &s, procs, 3, 6, moves, 16), 1,
		   "hysteresis: after the cooldown one moves (three in two groups)");
	procs[0] = (ns_proc) {0, 30, 0, -1, NULL};
	procs[1] = (ns_proc) {0, 100, 0, -1, NULL};
	is_int(ns_rebalance(plan, &s, procs, 2, 1, moves, 16), 0,
		   "threshold: idle sessions are below the imbalance threshold");
	ns_plan_free(plan);
	ns_topology_free(topo);

	topo = load("epyc-nps4", NULL);
	plan = plan_of(topo, 1);	/* one group of 32 CPUs per node */
	/* the order of the moves by imbalance (test_cross_node_rule: when they pay) */
	s.cross_node_only_when_waiting = false;
	for (int i = 0; i < 64; i++)
		procs[i] = (ns_proc) {i < 40 ? 0 : 1, 1000, 0, -1, NULL};
	/* node 0: 40 busy on 32 CPUs; node 1: 24 busy; node 2 and the rest idle */
	n = ns_rebalance(plan, &s, procs, 64, 1, moves, 16);
	is_int(n, 8, "distance order: the pass is bounded by max_moves");
	{
		int			to_node1 = 0,
					to_node2 = 0,
					other = 0;

		for (int m = 0; m < n; m++)
		{
			if (moves[m].to_group == 1)
				to_node1++;
			else if (moves[m].to_group == 2)
				to_node2++;
			else
				other++;
		}
		/* 40 vs 24 on 32 CPUs: four moves leave a gap of exactly 25 percent */
		is_int(to_node1, 4, "distance order: the nearest node takes moves while the gap passes 25 percent");
		is_int(to_node2, 4, "distance order: then the next nearest node, node 2");
		is_int(other, 0, "distance order: nothing goes to the far socket");
	}
	for (int i = 0; i < 64; i++)
		procs[i] = (ns_proc) {i < 40 ? 0 : 1, 1000, 0, -1, NULL};
	s.max_steal_distance = 11;
	n = ns_rebalance(plan, &s, procs, 64, 1, moves, 16);
	tap_ok(n > 0, "max distance 11: moves still happen to node 1");
	{
		bool		beyond = false;

		for (int m = 0; m < n; m++)
			beyond |= moves[m].to_group > 1;
		tap_ok(!beyond, "max distance 11: but none beyond it");
	}
	s.max_steal_distance = 0;
	for (int i = 0; i < 64; i++)
		procs[i] = (ns_proc) {0, 1000, 0, 0, NULL};
	is_int(ns_rebalance(plan, &s, procs, 64, 1, moves, 16), 0,
		   "keep_node: workers bound to their leader's node are not moved off it");
	ns_plan_free(plan);
	ns_topology_free(topo);
}

/* ---- numa_maps ----------------------------------------------------------- */

static void
test_numa_maps(void)
{
	const char *text =
		"55d0c0a00000 default file=/usr/lib/postgresql/15/bin/postgres mapped=300 N0=200 N1=100 kernelpagesize_kB=4\n"
		"7f3a40000000 interleave:0-1 file=/dev/zero\\040(deleted) dirty=90 N0=50 N1=40 kernelpagesize_kB=4\n"
		"7f3b00000000 prefer:1 file=/anon_hugepage\\040(deleted) huge dirty=3 N1=3 kernelpagesize_kB=2048\n"
		"7ffc10000000 default stack anon=5 dirty=5 N0=5 kernelpagesize_kB=4\n";
	uint64_t	kb[4] = {0};
	char		policy[64] = "";

	tap_ok(ns_numa_maps_kb(text, kb, 4, 0, NULL, 0), "numa_maps: parses");
	is_int(kb[0], (200 + 50 + 5) * 4, "numa_maps: node 0 kB over all mappings");
	is_int(kb[1], (100 + 40) * 4 + 3 * 2048, "numa_maps: node 1 kB, huge pages counted at their size");
	memset(kb, 0, sizeof(kb));
	tap_ok(ns_numa_maps_kb(text, kb, 4, 0x7f3a40000000, policy, sizeof(policy)), "numa_maps: one mapping");
	is_int(kb[0] + kb[1], 90 * 4, "numa_maps: only that mapping counts");
	is_str(policy, "interleave:0-1", "numa_maps: its policy");
	tap_ok(!ns_numa_maps_kb("not a line\n", kb, 4, 0, NULL, 0), "numa_maps: garbage is refused");
	memset(kb, 0, sizeof(kb));
	tap_ok(ns_numa_maps_private_kb(text, kb, 4), "numa_maps: private memory");
	is_int(kb[0] + kb[1], 5 * 4, "numa_maps: only the anonymous pages no file backs");
	memset(kb, 0, sizeof(kb));
	ns_numa_maps_private_kb("55d0c0c00000 default file=/usr/lib/postgresql/15/bin/postgres anon=7 dirty=7 N1=7 kernelpagesize_kB=4\n"
							"55d0c1000000 default heap anon=30 dirty=30 N0=20 N1=10 kernelpagesize_kB=4\n"
							"7f3a50000000 default anon=512 dirty=512 N1=512 kernelpagesize_kB=4\n", kb, 4);
	is_int(kb[0], 20 * 4, "numa_maps: heap pages on node 0");
	is_int(kb[1], (10 + 512) * 4, "numa_maps: heap and anonymous mmap on node 1, not a program's written data");
}

static void
test_homing(void)
{
	uint64_t	before[6] = {0, 0, 0, 0, 0, 0};
	uint64_t	now[6] = {100000, 85000, 79000, 0, 100000, 0};
	ns_cpuset	idle;
	ns_away		away[4];
	int			to_cpu[4];

	is_int(ns_idle_cpus(before, now, 6, 100000, &idle), 3, "homing: CPUs idle 80%% of the look or more");
	tap_ok(ns_cpuset_test(&idle, 0) && ns_cpuset_test(&idle, 1) && !ns_cpuset_test(&idle, 2) &&
		   ns_cpuset_test(&idle, 4), "homing: 0, 1 and 4 idle, 2 at 79%% not");
	is_int(ns_idle_cpus(before, now, 6, 0, &idle), 0, "homing: a first look finds none");
	(void) ns_idle_cpus(before, now, 6, 100000, &idle);
	/* home CPUs 0-2 for the first three, 3-5 for the last */
	for (int i = 0; i < 4; i++)
	{
		ns_cpuset_zero(&away[i].home);
		for (int cpu = i < 3 ? 0 : 3; cpu < (i < 3 ? 3 : 6); cpu++)
			ns_cpuset_set(&away[i].home, cpu);
	}
	away[0].cpu = 4;
	away[1].cpu = 2;			/* at home, on a busy CPU of its node */
	away[2].cpu = 5;
	away[3].cpu = 1;
	is_int(ns_choose_homecomings(&idle, 4, away, to_cpu), 3, "homing: three go home");
	tap_ok(to_cpu[0] == 0 && to_cpu[1] == -1 && to_cpu[2] == 1 && to_cpu[3] == 4,
		   "homing: each to an idle CPU of its own, one per CPU; one at home stays");
	away[3].cpu = 4;
	ns_cpuset_clear(&idle, 1);
	is_int(ns_choose_homecomings(&idle, 4, away, to_cpu), 1, "homing: one idle CPU at home, one goes");
	tap_ok(to_cpu[0] == 0 && to_cpu[2] == -1, "homing: the first found takes it, the next waits for another");
	/* nothing idle: 0 (home 0-2, on 4) and 3 (home 3-5, on 1) trade places; 2 (home 0-2, on 5) finds none left */
	ns_cpuset_zero(&idle);
	away[3].cpu = 1;
	is_int(ns_choose_homecomings(&idle, 4, away, to_cpu), 2, "homing: nothing idle, two each on the other's home trade places");
	tap_ok(to_cpu[0] == 1 && to_cpu[1] == -1 && to_cpu[2] == -1 && to_cpu[3] == 4,
		   "homing: the first away takes the partner on its home CPUs; the next finds none and stays");
	ns_cpuset_zero(&away[3].home);
	is_int(ns_choose_homecomings(&idle, 4, away, to_cpu), 0, "homing: one whose home is not known is left alone");
	/* a ring of three, one CPU a node: home 0 on 1, home 1 on 2, home 2 on 0 */
	for (int i = 0; i < 3; i++)
	{
		ns_cpuset_zero(&away[i].home);
		ns_cpuset_set(&away[i].home, i);
		away[i].cpu = (i + 1) % 3;
	}
	is_int(ns_choose_homecomings(&idle, 3, away, to_cpu), 3, "homing: a ring of three away moves round, nothing idle");
	tap_ok(to_cpu[0] == 0 && to_cpu[1] == 1 && to_cpu[2] == 2, "homing: ...each to its home CPU");
	away[2].cpu = 3;			/* the ring broken: 0's CPU is nobody's home */
	is_int(ns_choose_homecomings(&idle, 3, away, to_cpu), 0, "homing: a chain that does not close moves nobody");
}

int
main(int argc, char **argv)
{
	if (argc != 2)
	{
		fprintf(stderr, "usage: test_core FIXTURES_DIR\n");
		return 2;
	}
	fixtures = argv[1];
	snprintf(scratch, sizeof(scratch), "%s/broken-tree", fixtures);

	test_cpulist();
	test_epyc();
	test_xeon_and_big();
	test_odd_machines();
	test_broken_trees();
	test_placement();
	test_rebalance();
	test_classes();
	test_cross_node_rule();
	test_numa_maps();
	test_lending();
	test_statement_lending();
	test_homing();
	return tap_done();
}
