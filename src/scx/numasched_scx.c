/*
 * numasched-scx - loads numasched's sched_ext scheduler and keeps it loaded
 *
 *     numasched-scx [--max-steal-distance N] [--slice-ms N]
 *                   [--background-wait-ms N] [--stats SECONDS]
 *     numasched-scx --topology [--sysfs DIR] [--max-steal-distance N]
 *
 * Run as root (CAP_SYS_ADMIN and CAP_BPF), normally by its systemd unit.  It
 * fills the scheduler's topology (each CPU's node and last-level cache, each
 * node's nearer nodes in SLIT order within --max-steal-distance) from sysfs,
 * loads it, and waits.
 * The scheduler is attached through a BPF link that only this process holds:
 * when it exits, however it exits (SIGTERM, SIGKILL, a crash), the kernel
 * unloads the scheduler and every task returns to the kernel's own
 * scheduler at once.  The kernel unloads it too on an error of the
 * scheduler's or a task left runnable too long (its watchdog); this process
 * then says why and exits 1.  --topology prints the topology it would give
 * the scheduler, from /sys or another tree, and loads nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ns_topology.h"

/* the scheduler's own names for the types of its variables, in the skeleton */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
#include "numasched_scx.skel.h"

/* Debian 12's uapi headers (Linux 6.1) predate struct_ops links (6.4) */
#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
#define BPF_STRUCT_OPS_ATTACH 44	/* enum bpf_attach_type's BPF_STRUCT_OPS */

/* the scheduler's limits, as numasched_scx.bpf.c sizes its tables */
#define SCX_MAX_CPUS 1024
#define SCX_MAX_NODES 64

static const char *const stat_names[] = {
	"woke on its idle previous CPU", "woke on an idle CPU sharing its cache", "woke on an idle CPU at home",
	"woke on an idle CPU of another node", "queued",
	"served from its own node's queue", "served from a nearer node's queue",
	"background served when idle", "background served after its wait bound",
	"background preempted",
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	stop = 1;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: numasched-scx [--max-steal-distance N] [--slice-ms N] "
			"[--background-wait-ms N] [--stats SECONDS]\n"
			"       numasched-scx --topology [--sysfs DIR] [--max-steal-distance N]\n");
}

static long
number_arg(const char *name, const char *text, long min, long max)
{
	char	   *end;
	long		value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < min || value > max)
	{
		fprintf(stderr, "numasched-scx: %s must be an integer from %ld to %ld, not \"%s\"\n",
				name, min, max, text);
		exit(2);
	}
	return value;
}

/*
 * Each CPU's node and each node's nearer nodes, by the kernel's node ids:
 * those the scheduler's queues and the kernel's per-node idle masks use.
 * And the CPUs of a node that share a last-level cache, as a round: each
 * CPU names the next one (itself where sysfs names no cache).
 */
static void
fill_topology(struct numasched_scx_bpf *skel, const ns_topology *topo, int max_distance)
{
	struct numasched_scx_bpf__rodata *ro = skel->rodata;
	int			max_cpu = -1;

	for (int cpu = 0; cpu < SCX_MAX_CPUS; cpu++)
		ro->cache_next[cpu] = cpu;
	for (int i = 0; i < topo->nnodes; i++)
	{
		const ns_node *from = &topo->nodes[i];
		int			cpu;
		int			count = 0;

		if (from->id + 1 > (int) ro->nr_nodes)
			ro->nr_nodes = from->id + 1;
		ro->node_has_cpus[from->id] = from->ncpus > 0;
		NS_CPUSET_FOREACH(cpu, &from->cpus)
		{
			int			first = -1;
			int			next = -1;
			int			other;

			ro->cpu_node[cpu] = from->id;
			if (cpu > max_cpu)
				max_cpu = cpu;
			if (topo->llc_leader[cpu] < 0)
				continue;
			NS_CPUSET_FOREACH(other, &from->cpus)
			{
				if (topo->llc_leader[other] != topo->llc_leader[cpu])
					continue;
				if (first < 0)
					first = other;
				if (other > cpu && next < 0)
					next = other;
			}
			ro->cache_next[cpu] = next >= 0 ? next : first;
		}
		/* nearest first; ties by node id */
		for (int d = NS_LOCAL_DISTANCE + 1; d <= 255; d++)
			for (int j = 0; j < topo->nnodes; j++)
				if (j != i && topo->nodes[j].ncpus > 0 && ns_distance(topo, i, j) == d &&
					(max_distance == 0 || d <= max_distance))
					ro->steal_order[from->id][count++] = topo->nodes[j].id;
		ro->steal_count[from->id] = count;
	}
	ro->nr_cpus = max_cpu + 1;
}

/* What fill_topology gave the scheduler: per node, its CPUs, the nodes it takes work from, its caches */
static void
print_topology(const struct numasched_scx_bpf__rodata *ro, const ns_topology *topo)
{
	char		list[4096];

	for (int i = 0; i < topo->nnodes; i++)
	{
		const ns_node *node = &topo->nodes[i];
		ns_cpuset	seen;
		int			cpu;

		if (node->ncpus == 0)
			continue;
		ns_cpuset_format(&node->cpus, list, sizeof(list));
		printf("node %d: CPUs %s; then nodes", node->id, list);
		for (int k = 0; k < ro->steal_count[node->id]; k++)
			printf("%s%d", k ? "," : " ", ro->steal_order[node->id][k]);
		printf("%s; caches", ro->steal_count[node->id] ? "" : " none");
		ns_cpuset_zero(&seen);
		NS_CPUSET_FOREACH(cpu, &node->cpus)
		{
			ns_cpuset	round;
			int			member = cpu;

			if (ns_cpuset_test(&seen, cpu))
				continue;
			ns_cpuset_zero(&round);
			do
			{
				ns_cpuset_set(&round, member);
				member = ro->cache_next[member];
			} while (!ns_cpuset_test(&round, member));
			ns_cpuset_or(&seen, &seen, &round);
			ns_cpuset_format(&round, list, sizeof(list));
			printf(" %s", list);
		}
		printf("\n");
	}
}

static void
print_stats(const struct numasched_scx_bpf *skel)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		printf("%s%s %llu", i ? ", " : "numasched-scx: ", stat_names[i],
			   (unsigned long long) skel->bss->stats[i]);
	printf("\n");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{"max-steal-distance", required_argument, NULL, 'd'},
		{"slice-ms", required_argument, NULL, 's'},
		{"background-wait-ms", required_argument, NULL, 'b'},
		{"stats", required_argument, NULL, 'S'},
		{"topology", no_argument, NULL, 't'},
		{"sysfs", required_argument, NULL, 'y'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	long		max_distance = 0;
	long		slice_ms = 5;
	long		background_wait_ms = 100;
	long		stats_seconds = 0;
	bool		topology_only = false;
	const char *sysfs = "/sys";
	char		err[NS_ERRLEN];
	ns_topology *topo;
	struct numasched_scx_bpf *skel;
	struct bpf_link *update;
	int			link;
	int			opt;
	long		waited = 0;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
	{
		switch (opt)
		{
			case 'd':
				max_distance = number_arg("--max-steal-distance", optarg, 0, 255);
				break;
			case 's':
				slice_ms = number_arg("--slice-ms", optarg, 1, 1000);
				break;
			case 'b':
				background_wait_ms = number_arg("--background-wait-ms", optarg, 1, 10000);
				break;
			case 'S':
				stats_seconds = number_arg("--stats", optarg, 0, 86400);
				break;
			case 't':
				topology_only = true;
				break;
			case 'y':
				sysfs = optarg;
				break;
			case 'h':
				usage(stdout);
				return 0;
			default:
				usage(stderr);
				return 2;
		}
	}
	if (optind < argc)
	{
		usage(stderr);
		return 2;
	}

	if (!topology_only && strcmp(sysfs, "/sys") != 0)
	{
		fprintf(stderr, "numasched-scx: --sysfs goes with --topology: the scheduler loads for this machine's /sys\n");
		return 2;
	}
	if (!topology_only && access("/sys/kernel/sched_ext/state", R_OK) != 0)
	{
		fprintf(stderr, "numasched-scx: this kernel has no sched_ext (no /sys/kernel/sched_ext/state): it needs Linux 6.15 or later built with CONFIG_SCHED_CLASS_EXT\n");
		return 1;
	}
	topo = ns_topology_load(sysfs, NULL, err, sizeof(err));
	if (!topo)
	{
		fprintf(stderr, "numasched-scx: %s\n", err);
		return 1;
	}
	for (int i = 0; i < topo->nnodes; i++)
	{
		int			last = ns_cpuset_count(&topo->nodes[i].cpus) ? -1 : 0;
		int			cpu;

		NS_CPUSET_FOREACH(cpu, &topo->nodes[i].cpus)
			last = cpu;
		if (topo->nodes[i].id >= SCX_MAX_NODES || last >= SCX_MAX_CPUS)
		{
			fprintf(stderr, "numasched-scx: node %d or CPU %d is beyond the %d nodes and %d CPUs this build handles\n",
					topo->nodes[i].id, last, SCX_MAX_NODES, SCX_MAX_CPUS);
			return 1;
		}
	}

	skel = numasched_scx_bpf__open();
	if (!skel)
	{
		fprintf(stderr, "numasched-scx: cannot open the scheduler: %s\n", strerror(errno));
		return 1;
	}
	fill_topology(skel, topo, (int) max_distance);
	if (topology_only)
	{
		print_topology(skel->rodata, topo);
		return 0;
	}
	skel->rodata->slice_ns = slice_ms * 1000000ULL;
	skel->rodata->background_wait_ns = background_wait_ms * 1000000ULL;
	/* init creates the queues: scx_bpf_create_dsq may sleep */
	bpf_program__set_flags(skel->progs.ns_init, BPF_F_SLEEPABLE);
	/* attached by a link, not by a map update: the link dies with this process */
	bpf_map__set_map_flags(skel->maps.numasched_ops, BPF_F_LINK);
	if (numasched_scx_bpf__load(skel))
	{
		fprintf(stderr, "numasched-scx: the kernel refused the scheduler (is this Linux 6.15 or later with CONFIG_SCHED_CLASS_EXT? see /sys/kernel/sched_ext)\n");
		return 1;
	}
	/* the struct_ops map's value: programs and settings, not yet registered */
	update = bpf_map__attach_struct_ops(skel->maps.numasched_ops);
	if (!update)
	{
		fprintf(stderr, "numasched-scx: cannot fill the scheduler's operations: %s\n", strerror(errno));
		return 1;
	}
	link = bpf_link_create(bpf_map__fd(skel->maps.numasched_ops), 0, BPF_STRUCT_OPS_ATTACH, NULL);
	if (link < 0)
	{
		fprintf(stderr, "numasched-scx: cannot attach the scheduler: %s%s\n", strerror(errno),
				errno == EBUSY || errno == EEXIST ? " (another sched_ext scheduler is loaded)" : "");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("numasched-scx: loaded: SCHED_EXT tasks on %d nodes, max steal distance %ld, slice %ld ms\n",
		   topo->nnodes, max_distance, slice_ms);
	fflush(stdout);

	while (!stop && skel->bss->exit_kind == 0)
	{
		usleep(100000);
		if (stats_seconds && ++waited % (stats_seconds * 10) == 0)
			print_stats(skel);
	}
	print_stats(skel);
	if (skel->bss->exit_kind != 0)
	{
		fprintf(stderr, "numasched-scx: the kernel unloaded the scheduler: %s%s%s\n",
				skel->bss->exit_reason, skel->bss->exit_msg[0] ? ": " : "", skel->bss->exit_msg);
		return 1;
	}
	close(link);
	printf("numasched-scx: unloaded\n");
	return 0;
}
