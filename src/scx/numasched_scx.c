/*
 * numasched-scx - loads numasched's sched_ext scheduler and keeps it loaded
 *
 *     numasched-scx [--uid USER] [--max-steal-distance N] [--slice-ms N]
 *                   [--background-wait-ms N] [--stats SECONDS]
 *     numasched-scx --monitor [SECONDS]
 *     numasched-scx --topology [--sysfs DIR] [--max-steal-distance N]
 *
 * Run as root (CAP_SYS_ADMIN and CAP_BPF), normally by its systemd unit.  It
 * fills the scheduler's topology (each CPU's node and last-level cache, each
 * node's nearer nodes in SLIT order within --max-steal-distance) from sysfs,
 * names the server's user (the tasks that get numasched's tiers; every
 * other task gets a fair share), loads it, and waits.
 * The scheduler is attached through a BPF link that only this process holds:
 * when it exits, however it exits (SIGTERM, SIGKILL, a crash), the kernel
 * unloads the scheduler and every task returns to the kernel's own
 * scheduler at once.  The kernel unloads it too on an error of the
 * scheduler's or a task left runnable too long (its watchdog); this process
 * then says why (with the kernel's dump of the scheduler's state on an
 * error), and loads it again where the kernel asks for that (a CPU hotplug
 * during the load), else exits: 0 where an operator unloaded it (SysRq-S),
 * which a restart must not undo, 4 on a stall, 1 on another error.  --monitor prints the counters
 * of the scheduler another numasched-scx runs; --topology prints the
 * topology it would give the scheduler, from /sys or another tree, and
 * loads nothing.
 *
 * Exit status: 0 stopped (SIGTERM, SIGINT, or an operator's SysRq-S), 1
 * unloaded by the kernel on an error, 2 bad usage, 3 this kernel or this
 * process cannot load it, 4 unloaded by the kernel's watchdog (a task waited
 * too long): neither 3 nor 4 is worth retrying.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/ns_topology.h"
#include "ns_bandwidth.h"

/* the scheduler's own names for the types of its variables, in the skeleton */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
#include "numasched_scx.skel.h"

/* Debian 12's uapi headers (Linux 6.1) predate struct_ops links (6.4) */
#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
#define BPF_STRUCT_OPS_ATTACH 44	/* enum bpf_attach_type's BPF_STRUCT_OPS */

/* the scheduler's limits and tables, as numasched_scx.bpf.c sizes them */
#define SCX_MAX_CPUS 1024
#define SCX_MAX_NODES 64
#define SCX_NR_STATS 14
/* the kernel asks the scheduler's loader to load it again (SCX_ECODE_ACT_RESTART) */
#define SCX_ECODE_ACT_RESTART (1LL << 48)
/* and this loader does, but not more often than this in a minute */
#define MAX_RESTARTS_PER_MINUTE 10

#define EXIT_UNLOADED 1
#define EXIT_USAGE 2
#define EXIT_CANNOT 3
#define EXIT_STALLED 4

/* enum scx_exit_kind: below SCX_EXIT_ERROR an unload asked for, not an error */
#define SCX_EXIT_ERROR 1024
#define SCX_EXIT_ERROR_STALL 1026

struct stats_value
{
	u64			count[SCX_NR_STATS];
	u64			longest_background_wait_ns;
	u64			node_served[SCX_MAX_NODES];
};

static const char *const stat_names[SCX_NR_STATS] = {
	"woke on its idle previous CPU", "woke on an idle CPU sharing its cache", "woke on an idle CPU at home",
	"woke on an idle CPU of another node", "queued",
	"served from its own node's queue", "served from a nearer node's queue",
	"background served when idle", "background served at its wait bound",
	"background later than its bound", "preempted",
	"fair-tier tasks queued or placed", "fair-tier tasks that chose SCHED_EXT",
	"looked for work",
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
	fprintf(out, "usage: numasched-scx [--uid USER] [--max-steal-distance N] [--slice-ms N]\n"
			"                     [--background-wait-ms N] [--stats SECONDS]\n"
			"       numasched-scx --monitor [SECONDS]\n"
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
		exit(EXIT_USAGE);
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
		NS_CPUSET_FOREACH(cpu, &from->cpus)
		{
			int			first = -1;
			int			next = -1;
			int			other;

			ro->cpu_node[cpu] = from->id;
			ro->node_cpus[from->id][cpu / 64] |= 1ULL << (cpu % 64);
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

/* The scheduler's counters, summed over the CPUs; false if they cannot be read */
static bool
read_stats(int map_fd, struct stats_value *sum)
{
	int			ncpus = libbpf_num_possible_cpus();
	struct stats_value *per_cpu;
	u32			zero = 0;

	if (ncpus <= 0 || (per_cpu = calloc(ncpus, sizeof(*per_cpu))) == NULL)
		return false;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(map_fd, &zero, per_cpu) != 0)
	{
		free(per_cpu);
		return false;
	}
	for (int c = 0; c < ncpus; c++)
	{
		for (int i = 0; i < SCX_NR_STATS; i++)
			sum->count[i] += per_cpu[c].count[i];
		for (int n = 0; n < SCX_MAX_NODES; n++)
			sum->node_served[n] += per_cpu[c].node_served[n];
		if (per_cpu[c].longest_background_wait_ns > sum->longest_background_wait_ns)
			sum->longest_background_wait_ns = per_cpu[c].longest_background_wait_ns;
	}
	free(per_cpu);
	return true;
}

static void
print_stats(int map_fd)
{
	struct stats_value sum;

	if (!read_stats(map_fd, &sum))
	{
		fprintf(stderr, "numasched-scx: cannot read the scheduler's counters: %s\n", strerror(errno));
		return;
	}
	for (int i = 0; i < SCX_NR_STATS; i++)
		printf("%s%s %llu", i ? ", " : "numasched-scx: ", stat_names[i], (unsigned long long) sum.count[i]);
	printf(", longest background wait %.1f ms; normal work served per node:",
		   sum.longest_background_wait_ns / 1e6);
	for (int n = 0; n < SCX_MAX_NODES; n++)
		if (sum.node_served[n])
			printf(" %d:%llu", n, (unsigned long long) sum.node_served[n]);
	printf("\n");
	fflush(stdout);
}

/* The counters of a numasched-scx loaded by another process, found by their map's name */
static int
monitor(long seconds)
{
	u32			id = 0;
	int			fd = -1;
	int			found = 0;

	while (fd < 0 && (found = bpf_map_get_next_id(id, &id)) == 0)
	{
		struct bpf_map_info info = {0};
		u32			len = sizeof(info);
		int			candidate = bpf_map_get_fd_by_id(id);

		if (candidate < 0)
			continue;
		if (bpf_obj_get_info_by_fd(candidate, &info, &len) == 0 && strcmp(info.name, "ns_stats") == 0 &&
			info.value_size == sizeof(struct stats_value))
			fd = candidate;
		else
			close(candidate);
	}
	if (fd < 0)
	{
		fprintf(stderr, "numasched-scx: %s\n", found == -EPERM ?
				"reading BPF maps needs root (CAP_SYS_ADMIN)" : "no numasched-scx is loaded");
		return found == -EPERM ? EXIT_CANNOT : EXIT_UNLOADED;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	do
	{
		print_stats(fd);
		for (long t = 0; t < seconds * 10 && !stop; t++)
			usleep(100000);
	} while (seconds > 0 && !stop);
	return 0;
}

/* Tells systemd (Type=notify) how it stands; nothing without $NOTIFY_SOCKET */
static void
notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int			fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(addr.sun_path))
		return;
	strcpy(addr.sun_path, path);
	if (path[0] == '@')
		addr.sun_path[0] = '\0';	/* an abstract socket */
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return;
	(void) sendto(fd, state, strlen(state), 0, (struct sockaddr *) &addr,
				  offsetof(struct sockaddr_un, sun_path) + strlen(path));
	close(fd);
}

/*
 * Registers the scheduler through a BPF link, once.  From libbpf 1.2 on,
 * bpf_map__attach_struct_ops makes the link itself for a map flagged
 * BPF_F_LINK, and the scheduler is registered when it returns; libbpf 1.1
 * only fills the map, and returns the map's own fd as a link, and the link
 * is made here.  Asked of the libbpf this runs with, not the one it was
 * built against (the soname is the same).
 */
static bool
attach(struct numasched_scx_bpf *skel, struct bpf_link **link, int *own_link)
{
	int			map_fd = bpf_map__fd(skel->maps.numasched_ops);

	*own_link = -1;
	*link = bpf_map__attach_struct_ops(skel->maps.numasched_ops);
	if (*link == NULL)
		return false;
	if (bpf_link__fd(*link) != map_fd)
		return true;
	bpf_link__disconnect(*link);
	bpf_link__destroy(*link);
	*link = NULL;
	*own_link = bpf_link_create(map_fd, 0, BPF_STRUCT_OPS_ATTACH, NULL);
	return *own_link >= 0;
}

struct settings
{
	long		max_distance;
	long		slice_ms;
	long		background_wait_ms;
	long		stats_seconds;
	uid_t		server_uid;
	const char *server_user;
};

/*
 * One load of the scheduler, until a signal or the kernel unloads it: 0
 * stopped, EXIT_UNLOADED (and *restart when the kernel asks to be loaded
 * again), EXIT_CANNOT.
 */
static int
run_once(const struct settings *set, bool *restart)
{
	char		err[NS_ERRLEN];
	ns_topology *topo;
	struct numasched_scx_bpf *skel;
	struct bpf_link *link;
	int			own_link;
	long		waited = 0;
	int			status = 0;

	*restart = false;
	/* read again at each load: a CPU may have come or gone */
	topo = ns_topology_load("/sys", NULL, err, sizeof(err));
	if (!topo)
	{
		fprintf(stderr, "numasched-scx: %s\n", err);
		return EXIT_CANNOT;
	}
	for (int i = 0; i < topo->nnodes; i++)
	{
		int			last = -1;
		int			cpu;

		NS_CPUSET_FOREACH(cpu, &topo->nodes[i].cpus)
			last = cpu;
		if (topo->nodes[i].id >= SCX_MAX_NODES || last >= SCX_MAX_CPUS)
		{
			fprintf(stderr, "numasched-scx: node %d or CPU %d is beyond the %d nodes and %d CPUs this build handles\n",
					topo->nodes[i].id, last, SCX_MAX_NODES, SCX_MAX_CPUS);
			return EXIT_CANNOT;
		}
	}
	skel = numasched_scx_bpf__open();
	if (!skel)
	{
		fprintf(stderr, "numasched-scx: cannot open the scheduler: %s\n", strerror(errno));
		return EXIT_CANNOT;
	}
	fill_topology(skel, topo, (int) set->max_distance);
	skel->rodata->server_uid = set->server_uid;
	skel->rodata->slice_ns = set->slice_ms * 1000000ULL;
	skel->rodata->background_wait_ns = set->background_wait_ms * 1000000ULL;
	skel->rodata->background_slice_ns = skel->rodata->slice_ns / 5 ? skel->rodata->slice_ns / 5 : 1;
	/* init creates the queues: scx_bpf_create_dsq may sleep */
	bpf_program__set_flags(skel->progs.ns_init, BPF_F_SLEEPABLE);
	/* attached by a link, not by a map update: the link dies with this process */
	bpf_map__set_map_flags(skel->maps.numasched_ops, BPF_F_LINK);
	if (numasched_scx_bpf__load(skel))
	{
		int			e = errno;

		fprintf(stderr, "numasched-scx: the kernel refused the scheduler: %s%s\n", strerror(e),
				e == EPERM || e == EACCES ? " (it needs root: CAP_SYS_ADMIN and CAP_BPF)" :
				" (it needs Linux 6.15 or later built with CONFIG_SCHED_CLASS_EXT; libbpf's messages above say what failed)");
		numasched_scx_bpf__destroy(skel);
		return EXIT_CANNOT;
	}
	if (!attach(skel, &link, &own_link))
	{
		int			e = errno;

		fprintf(stderr, "numasched-scx: cannot attach the scheduler: %s%s\n", strerror(e),
				e == EBUSY || e == EEXIST ? " (another sched_ext scheduler is loaded: /sys/kernel/sched_ext/root/ops)" : "");
		numasched_scx_bpf__destroy(skel);
		return e == EBUSY || e == EEXIST ? EXIT_UNLOADED : EXIT_CANNOT;
	}
	printf("numasched-scx: loaded (libbpf %s): tasks of %s (uid %u) on %d nodes, the rest in the fair tier; max steal distance %ld, slice %ld ms, background wait bound %ld ms\n",
		   libbpf_version_string(), set->server_user, (unsigned) set->server_uid, topo->nnodes,
		   set->max_distance, set->slice_ms, set->background_wait_ms);
	fflush(stdout);
	notify_systemd("READY=1\nSTATUS=loaded");

	while (!stop && skel->bss->exit_kind == 0)
	{
		usleep(100000);
		if (set->stats_seconds && ++waited % (set->stats_seconds * 10) == 0)
			print_stats(bpf_map__fd(skel->maps.ns_stats));
	}
	print_stats(bpf_map__fd(skel->maps.ns_stats));
	if (skel->bss->exit_kind != 0)
	{
		long long	kind = skel->bss->exit_kind;

		fprintf(stderr, "numasched-scx: the kernel unloaded the scheduler: %s%s%s (exit kind %lld, code %#llx)\n",
				skel->bss->exit_reason, skel->bss->exit_msg[0] ? ": " : "", skel->bss->exit_msg,
				kind, (long long) skel->bss->exit_code);
		/* the kernel's dump of the scheduler's state: the journal keeps it */
		if (kind >= SCX_EXIT_ERROR && skel->bss->exit_dump[0])
			fprintf(stderr, "numasched-scx: the kernel's dump:\n%.*s\n",
					(int) sizeof(skel->bss->exit_dump), skel->bss->exit_dump);
		*restart = (skel->bss->exit_code & SCX_ECODE_ACT_RESTART) != 0;
		if (*restart)
			status = EXIT_UNLOADED;
		else if (kind < SCX_EXIT_ERROR)
		{
			/* an operator's unload (SysRq-S): a service restart must not undo it */
			fprintf(stderr, "numasched-scx: unloaded as asked: not loading it again\n");
			status = 0;
		}
		else
			status = kind == SCX_EXIT_ERROR_STALL ? EXIT_STALLED : EXIT_UNLOADED;
	}
	else
		printf("numasched-scx: unloaded\n");
	if (own_link >= 0)
		close(own_link);
	bpf_link__destroy(link);
	numasched_scx_bpf__destroy(skel);
	return status;
}

/* --topology: what the scheduler would be given on the machine under "sysfs". */
static int
show_topology(const char *sysfs, int max_distance, const char *loading_only)
{
	char		err[NS_ERRLEN];
	ns_topology *topo;
	struct numasched_scx_bpf *skel;

	if (loading_only)
	{
		fprintf(stderr, "numasched-scx: %s applies to loading the scheduler, not to --topology\n", loading_only);
		return EXIT_USAGE;
	}
	if ((topo = ns_topology_load(sysfs, NULL, err, sizeof(err))) == NULL)
	{
		fprintf(stderr, "numasched-scx: %s\n", err);
		return 1;
	}
	if ((skel = numasched_scx_bpf__open()) == NULL)
	{
		fprintf(stderr, "numasched-scx: cannot open the scheduler: %s\n", strerror(errno));
		return 1;
	}
	fill_topology(skel, topo, max_distance);
	print_topology(skel->rodata, topo);
	return 0;
}

/* The uid of --uid (a name or a number); false, said why, when there is none or it is root's. */
static bool
find_server_uid(struct settings *set)
{
	struct passwd *pw = getpwnam(set->server_user);

	if (pw == NULL)
	{
		char	   *end;
		long		uid = strtol(set->server_user, &end, 10);

		if (*set->server_user == '\0' || *end || uid < 0)
		{
			fprintf(stderr, "numasched-scx: no user \"%s\": --uid names the user PostgreSQL's server runs as (a name or a number)\n",
					set->server_user);
			return false;
		}
		set->server_uid = (uid_t) uid;
	}
	else
		set->server_uid = pw->pw_uid;
	if (set->server_uid == 0)
	{
		fprintf(stderr, "numasched-scx: --uid %s is root: every root process would get PostgreSQL's tiers\n", set->server_user);
		return false;
	}
	return true;
}

/*
 * Loads the scheduler and runs until stopped; loads it again when the
 * kernel asks (a CPU came or went), unless it keeps asking.
 */
static int
load_until_stopped(const struct settings *set)
{
	time_t		restarts[MAX_RESTARTS_PER_MINUTE] = {0};
	int			nrestarts = 0;

	for (;;)
	{
		bool		restart;
		int			status = run_once(set, &restart);
		time_t		now = time(NULL);

		if (!restart || stop)
			return status;
		if (nrestarts == MAX_RESTARTS_PER_MINUTE && now - restarts[0] < 60)
		{
			fprintf(stderr, "numasched-scx: the kernel asked %d times within a minute to load the scheduler again: giving up\n",
					MAX_RESTARTS_PER_MINUTE);
			return status;
		}
		if (nrestarts == MAX_RESTARTS_PER_MINUTE)
			memmove(restarts, restarts + 1, --nrestarts * sizeof(time_t));
		restarts[nrestarts++] = now;
		notify_systemd("STATUS=loading again, as the kernel asked");
		printf("numasched-scx: loading the scheduler again, as the kernel asked\n");
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{"uid", required_argument, NULL, 'u'},
		{"max-steal-distance", required_argument, NULL, 'd'},
		{"slice-ms", required_argument, NULL, 's'},
		{"background-wait-ms", required_argument, NULL, 'b'},
		{"stats", required_argument, NULL, 'S'},
		{"monitor", optional_argument, NULL, 'm'},
		{"topology", no_argument, NULL, 't'},
		{"sysfs", required_argument, NULL, 'y'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	struct settings set = {0, 5, 100, 0, 0, "postgres"};
	bool		topology_only = false;
	bool		monitoring = false;
	long		monitor_seconds = 0;
	const char *sysfs = "/sys";
	const char *loading_only = NULL;	/* an option that applies to a load only */
	int			opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
	{
		switch (opt)
		{
			case 'u':
				set.server_user = optarg;
				loading_only = "--uid";
				break;
			case 'd':
				set.max_distance = number_arg("--max-steal-distance", optarg, 0, 255);
				/* SLIT: 10 is a node's distance to itself; every other is more */
				if (set.max_distance > 0 && set.max_distance <= NS_LOCAL_DISTANCE)
				{
					fprintf(stderr, "numasched-scx: --max-steal-distance is 0 (any) or a SLIT distance above %d, not %ld: at %ld no node would take work from another\n",
							NS_LOCAL_DISTANCE, set.max_distance, set.max_distance);
					return EXIT_USAGE;
				}
				break;
			case 's':
				set.slice_ms = number_arg("--slice-ms", optarg, 1, 1000);
				loading_only = "--slice-ms";
				break;
			case 'b':
				set.background_wait_ms = number_arg("--background-wait-ms", optarg, 1, 10000);
				loading_only = "--background-wait-ms";
				break;
			case 'S':
				set.stats_seconds = number_arg("--stats", optarg, 0, 86400);
				loading_only = "--stats";
				break;
			case 'm':
				monitoring = true;
				monitor_seconds = optarg ? number_arg("--monitor", optarg, 0, 86400) : 0;
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
				return EXIT_USAGE;
		}
	}
	if (optind < argc)
	{
		usage(stderr);
		return EXIT_USAGE;
	}
	if (monitoring && (topology_only || loading_only || set.max_distance || strcmp(sysfs, "/sys") != 0))
	{
		fprintf(stderr, "numasched-scx: --monitor takes no other option: it reads the counters of the numasched-scx that runs\n");
		return EXIT_USAGE;
	}
	if (monitoring)
		return monitor(monitor_seconds);
	if (!topology_only && strcmp(sysfs, "/sys") != 0)
	{
		fprintf(stderr, "numasched-scx: --sysfs goes with --topology: the scheduler loads for this machine's /sys\n");
		return EXIT_USAGE;
	}
	if (topology_only)
		return show_topology(sysfs, (int) set.max_distance, loading_only);

	if (!find_server_uid(&set))
		return EXIT_USAGE;
	if (access("/sys/kernel/sched_ext/state", R_OK) != 0)
	{
		fprintf(stderr, "numasched-scx: this kernel has no sched_ext (no /sys/kernel/sched_ext/state): it needs Linux 6.15 or later built with CONFIG_SCHED_CLASS_EXT\n");
		return EXIT_CANNOT;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ns_report_bandwidth_limits(ns_cgroup2_root(), stderr, 10);

	return load_until_stopped(&set);
}
