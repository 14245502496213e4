/*
 * ns_topology.c - reading the NUMA topology from a sysfs tree
 *
 * The files and their formats are the kernel's (drivers/base/node.c,
 * drivers/base/cacheinfo.c):
 *   devices/system/cpu/online                       CPU list
 *   devices/system/node/nodeN/cpulist               CPU list
 *   devices/system/node/nodeN/distance              one number per online node
 *   devices/system/node/nodeN/meminfo               "Node N MemTotal: X kB"
 *   devices/system/cpu/cpuN/topology/thread_siblings_list
 *   devices/system/cpu/cpuN/cache/index3/shared_cpu_list
 * The distance file lists the online nodes in id order, which are exactly the
 * node directories.  A kernel without NUMA has no node directory: that is one
 * node 0 with every CPU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* CPU_ALLOC, qsort_r */
#endif
#include "core/ns_topology.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/self/smaps of a backend with many mappings can pass a few MB */
#define MAX_FILE_SIZE (64 * 1024 * 1024)

char *
ns_read_text_file(const char *path, size_t *len)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t		cap = 4096,
				used = 0;
	char	   *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	for (;;)
	{
		ssize_t		n;

		if (buf == NULL)
		{
			close(fd);
			errno = ENOMEM;
			return NULL;
		}
		if (used + 1 >= cap)
		{
			char	   *bigger;

			if (cap >= MAX_FILE_SIZE)
			{
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			bigger = realloc(buf, cap * 2);
			if (bigger == NULL)
				free(buf);
			buf = bigger;
			cap *= 2;
			continue;
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n < 0)
		{
			int			save = errno;

			if (save == EINTR)
				continue;
			free(buf);
			close(fd);
			errno = save;
			return NULL;
		}
		if (n == 0)
			break;
		used += n;
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
}

/*
 * snprintf for messages and for paths below the sysfs root (the root's
 * length is checked once in ns_topology_load, so a path always fits).
 */
static void put_text(char *buf, size_t size, const char *fmt,...) __attribute__((format(printf, 3, 4)));

static void
put_text(char *buf, size_t size, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/*
 * Reads a file into a malloc'd buffer; on failure sets err naming the file.
 * A missing file is an error unless missing_ok, which returns NULL with an
 * empty err.
 */
static char *
read_sysfs_file(const char *path, bool missing_ok, size_t *len,
				char *err, size_t errlen)
{
	char	   *text = ns_read_text_file(path, len);

	err[0] = '\0';
	if (text == NULL && !(missing_ok && errno == ENOENT))
		put_text(err, errlen, "could not read \"%s\": %s", path, strerror(errno));
	else if (text != NULL && memchr(text, '\0', *len) != NULL)
	{
		put_text(err, errlen, "malformed \"%s\": contains a NUL byte", path);
		free(text);
		return NULL;
	}
	return text;
}

static bool
read_cpulist_file(const char *path, bool missing_ok, ns_cpuset *set,
				  bool *found, char *err, size_t errlen)
{
	size_t		len;
	char	   *text = read_sysfs_file(path, missing_ok, &len, err, errlen);
	char		why[128];
	bool		ok;

	*found = text != NULL;
	if (text == NULL)
		return err[0] == '\0';
	ok = ns_cpuset_parse(text, len, NS_MAX_CPUS, set, why, sizeof(why));
	if (!ok)
		put_text(err, errlen, "malformed CPU list in \"%s\": %s", path, why);
	free(text);
	return ok;
}

static int
compare_int(const void *a, const void *b)
{
	int			x = *(const int *) a,
				y = *(const int *) b;

	return (x > y) - (x < y);
}

/*
 * The node ids that have a directory, sorted.  Returns the count, 0 when the
 * kernel has no node directory at all, -1 on error.
 */
static int
list_node_ids(const char *dir, int *ids, char *err, size_t errlen)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	int			n = 0;

	if (d == NULL)
	{
		if (errno == ENOENT)
			return 0;
		put_text(err, errlen, "could not open directory \"%s\": %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL)
	{
		const char *p = de->d_name;
		long		id = 0;

		if (strncmp(p, "node", 4) != 0 || !isdigit((unsigned char) p[4]))
			continue;
		/* checked after each digit: the last one can take it past the limit */
		for (p += 4; isdigit((unsigned char) *p) && id < NS_MAX_NODES; p++)
			id = id * 10 + (*p - '0');
		if (id >= NS_MAX_NODES)
		{
			put_text(err, errlen, "node directory \"%s/%s\" has an id above the supported maximum %d",
					 dir, de->d_name, NS_MAX_NODES - 1);
			closedir(d);
			return -1;
		}
		if (*p != '\0')
			continue;			/* "node0foo" is not a node directory */
		ids[n++] = (int) id;
	}
	closedir(d);
	qsort(ids, n, sizeof(int), compare_int);
	return n;
}

/* Parses the MemTotal line of a node's meminfo. */
static bool
read_node_memory(const char *path, uint64_t *kb, char *err, size_t errlen)
{
	size_t		len;
	char	   *text = read_sysfs_file(path, true, &len, err, errlen);
	char	   *line;

	*kb = 0;
	if (text == NULL)
		return err[0] == '\0';	/* no meminfo: memory unknown, not an error */
	line = strstr(text, "MemTotal:");
	if (line == NULL)
	{
		put_text(err, errlen, "malformed \"%s\": no MemTotal line", path);
		free(text);
		return false;
	}
	line += strlen("MemTotal:");
	while (*line == ' ' || *line == '\t')
		line++;
	if (!isdigit((unsigned char) *line))
	{
		put_text(err, errlen, "malformed \"%s\": MemTotal is not a number", path);
		free(text);
		return false;
	}
	errno = 0;
	*kb = strtoull(line, &line, 10);
	if (errno == ERANGE || strncmp(line, " kB", 3) != 0)
	{
		put_text(err, errlen, "malformed \"%s\": MemTotal is not a number of kB", path);
		free(text);
		return false;
	}
	free(text);
	return true;
}

/* Parses a node's distance file: exactly "count" numbers from 1 to 255. */
static bool
read_distances(const char *path, int count, uint8_t *row, char *err, size_t errlen)
{
	size_t		len;
	char	   *text = read_sysfs_file(path, false, &len, err, errlen);
	char	   *p;
	int			n = 0;

	if (text == NULL)
		return false;
	for (p = text;;)
	{
		long		value = 0;
		char	   *start;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
		start = p;
		while (isdigit((unsigned char) *p) && value <= 255)
			value = value * 10 + (*p++ - '0');
		if (p == start || value < 1 || value > 255 ||
			(*p != ' ' && *p != '\t' && *p != '\n' && *p != '\0'))
		{
			put_text(err, errlen, "malformed \"%s\": distance %d is not a number from 1 to 255",
					  path, n + 1);
			free(text);
			return false;
		}
		if (n == count)
		{
			n++;
			break;
		}
		row[n++] = (uint8_t) value;
	}
	if (*p == '\n')
		p++;
	if (n != count || *p != '\0')
	{
		put_text(err, errlen, "malformed \"%s\": expected %d distances, one per node directory",
				  path, count);
		free(text);
		return false;
	}
	free(text);
	return true;
}

/* Fills leader[cpu] with the lowest CPU of the set listed in each CPU's file. */
static bool
read_cpu_domains(const char *root, const ns_cpuset *cpus, const char *file,
				 int16_t *leader, bool *any, char *err, size_t errlen)
{
	int			cpu;

	*any = false;
	NS_CPUSET_FOREACH(cpu, cpus)
	{
		char		path[4096];
		ns_cpuset	domain;
		bool		found;

		if (leader[cpu] >= 0)
			continue;			/* already known from an earlier sibling */
		put_text(path, sizeof(path), "%s/devices/system/cpu/cpu%d/%s", root, cpu, file);
		if (!read_cpulist_file(path, true, &domain, &found, err, errlen))
			return false;
		if (!found)
			continue;
		if (!ns_cpuset_test(&domain, cpu))
		{
			put_text(err, errlen, "malformed \"%s\": does not contain CPU %d itself", path, cpu);
			return false;
		}
		*any = true;
		{
			int			first = ns_cpuset_next(&domain, 0);
			int			member;

			/* Siblings are assigned once; a CPU listed twice must agree. */
			NS_CPUSET_FOREACH(member, &domain)
			{
				if (!ns_cpuset_test(cpus, member))
					continue;
				if (leader[member] >= 0 && leader[member] != first)
				{
					put_text(err, errlen, "malformed \"%s\": CPU %d is also in another domain",
							  path, member);
					return false;
				}
				leader[member] = (int16_t) first;
			}
		}
	}
	return true;
}

void
ns_topology_free(ns_topology *topo)
{
	if (topo == NULL)
		return;
	free(topo->nodes);
	free(topo->distance);
	free(topo->core_leader);
	free(topo->llc_leader);
	free(topo);
}

int
ns_topology_memory_nodes(const ns_topology *topo, bool with_cpus, ns_cpuset *ids)
{
	int			count = 0;

	ns_cpuset_zero(ids);
	for (int n = 0; n < topo->nnodes; n++)
	{
		const ns_node *node = &topo->nodes[n];

		if (ns_node_memory_usable(node) && (node->ncpus > 0 || !with_cpus))
		{
			ns_cpuset_set(ids, node->id);
			count++;
		}
	}
	return count;
}

int
ns_topology_node_index(const ns_topology *topo, int id)
{
	for (int i = 0; i < topo->nnodes; i++)
		if (topo->nodes[i].id == id)
			return i;
	return -1;
}

/*
 * Reads each node sysfs lists: its online CPUs (a CPU listed by two nodes is
 * malformed), its memory, and its row of distances into full_distance.
 */
static bool
read_listed_nodes(const char *nodedir, const int *ids, int nids, const ns_cpuset *online,
				  const ns_limits *limits, ns_topology *topo, uint8_t *full_distance,
				  char *err, size_t errlen)
{
	char		path[4096];
	ns_cpuset	claimed;
	bool		found;

	ns_cpuset_zero(&claimed);
	for (int i = 0; i < nids; i++)
	{
		ns_node    *node = &topo->nodes[i];
		ns_cpuset	listed,
					both;

		node->id = ids[i];
		put_text(path, sizeof(path), "%s/node%d/cpulist", nodedir, ids[i]);
		if (!read_cpulist_file(path, false, &listed, &found, err, errlen))
			return false;
		ns_cpuset_and(&both, &listed, &claimed);
		if (!ns_cpuset_empty(&both))
		{
			put_text(err, errlen, "malformed \"%s\": CPU %d is also listed by another node",
					  path, ns_cpuset_next(&both, 0));
			return false;
		}
		ns_cpuset_or(&claimed, &claimed, &listed);
		ns_cpuset_and(&node->cpus, &listed, online);

		put_text(path, sizeof(path), "%s/node%d/meminfo", nodedir, ids[i]);
		if (!read_node_memory(path, &node->memory_kb, err, errlen))
			return false;

		put_text(path, sizeof(path), "%s/node%d/distance", nodedir, ids[i]);
		if (!read_distances(path, nids, full_distance + (size_t) i * nids, err, errlen))
			return false;
		node->memory_allowed = limits == NULL || limits->mems == NULL ||
			ns_cpuset_test(limits->mems, ids[i]);
	}
	return true;
}

/*
 * Keeps nodes with usable CPUs, and CPU-less nodes whose memory we may use,
 * with their distances: a node whose CPUs are all outside our mask is not
 * ours at all.  False when out of memory.
 */
static bool
keep_usable_nodes(ns_topology *topo, int nids, const uint8_t *full_distance, const ns_limits *limits)
{
	int		   *keep = malloc(nids * sizeof(int));
	int			kept = 0;

	if (keep == NULL)
		return false;
	for (int i = 0; i < nids; i++)
	{
		ns_node    *node = &topo->nodes[i];
		bool		hardware_cpus = !ns_cpuset_empty(&node->cpus);

		if (limits && limits->cpus)
			ns_cpuset_and(&node->cpus, &node->cpus, limits->cpus);
		node->ncpus = ns_cpuset_count(&node->cpus);
		node->has_cpus = node->ncpus > 0;
		if (node->has_cpus ||
			(!hardware_cpus && ns_node_memory_usable(node)))
		{
			keep[kept] = i;
			if (kept != i)
				topo->nodes[kept] = *node;
			kept++;
			ns_cpuset_or(&topo->usable, &topo->usable, &topo->nodes[kept - 1].cpus);
		}
	}
	topo->distance = malloc((size_t) (kept ? kept : 1) * (kept ? kept : 1));
	if (topo->distance == NULL)
	{
		free(keep);
		return false;
	}
	for (int a = 0; a < kept; a++)
		for (int b = 0; b < kept; b++)
			topo->distance[a * kept + b] = full_distance[keep[a] * nids + keep[b]];
	free(keep);
	topo->nnodes = kept;
	return true;
}

/* Each usable CPU's core and last-level cache; a CPU without a sibling file is a core of its own. */
static bool
read_cores_and_caches(const char *root, ns_topology *topo, char *err, size_t errlen)
{
	bool		any;
	int			cpu;

	if (!read_cpu_domains(root, &topo->usable, "topology/thread_siblings_list",
						  topo->core_leader, &any, err, errlen))
		return false;
	if (!read_cpu_domains(root, &topo->usable, "cache/index3/shared_cpu_list",
						  topo->llc_leader, &topo->has_llc, err, errlen))
		return false;
	NS_CPUSET_FOREACH(cpu, &topo->usable)
	{
		if (topo->core_leader[cpu] < 0)
			topo->core_leader[cpu] = (int16_t) cpu;
	}
	return true;
}

ns_topology *
ns_topology_load(const char *root, const ns_limits *limits, char *err, size_t errlen)
{
	char		path[4096];
	char		nodedir[4096];
	ns_cpuset	online;
	bool		found;
	int		   *ids = NULL;
	int			nids;
	uint8_t    *full_distance = NULL;
	ns_topology *topo = calloc(1, sizeof(ns_topology));

	if (topo == NULL)
		goto oom;
	topo->nodes = calloc(NS_MAX_NODES, sizeof(ns_node));
	topo->core_leader = malloc(NS_MAX_CPUS * sizeof(int16_t));
	topo->llc_leader = malloc(NS_MAX_CPUS * sizeof(int16_t));
	ids = malloc(NS_MAX_NODES * sizeof(int));
	if (!topo->nodes || !topo->core_leader || !topo->llc_leader || !ids)
		goto oom;
	memset(topo->core_leader, 0xff, NS_MAX_CPUS * sizeof(int16_t));
	memset(topo->llc_leader, 0xff, NS_MAX_CPUS * sizeof(int16_t));

	if (strlen(root) > 2048)
	{
		put_text(err, errlen, "sysfs root \"%.64s...\" is too long", root);
		goto fail;
	}
	put_text(path, sizeof(path), "%s/devices/system/cpu/online", root);
	if (!read_cpulist_file(path, false, &online, &found, err, errlen))
		goto fail;
	if (ns_cpuset_empty(&online))
	{
		put_text(err, errlen, "malformed \"%s\": no CPU is online", path);
		goto fail;
	}

	put_text(nodedir, sizeof(nodedir), "%s/devices/system/node", root);
	nids = list_node_ids(nodedir, ids, err, errlen);
	if (nids < 0)
		goto fail;
	full_distance = malloc(nids > 0 ? (size_t) nids * nids : 1);
	if (full_distance == NULL)
		goto oom;
	if (nids == 0)
	{
		/* A kernel without NUMA: one node with every online CPU. */
		nids = 1;
		full_distance[0] = NS_LOCAL_DISTANCE;
		topo->nodes[0].id = 0;
		topo->nodes[0].cpus = online;
		topo->nodes[0].memory_allowed = true;
	}
	else if (!read_listed_nodes(nodedir, ids, nids, &online, limits, topo, full_distance, err, errlen))
		goto fail;

	if (!keep_usable_nodes(topo, nids, full_distance, limits))
		goto oom;
	if (ns_cpuset_empty(&topo->usable))
	{
		put_text(err, errlen, "no usable CPU under \"%s\": none of the online CPUs is in the allowed set", root);
		goto fail;
	}
	if (!read_cores_and_caches(root, topo, err, errlen))
		goto fail;

	free(ids);
	free(full_distance);
	return topo;

oom:
	put_text(err, errlen, "out of memory reading the topology");
fail:
	free(ids);
	free(full_distance);
	ns_topology_free(topo);
	return NULL;
}

bool
ns_process_limits(ns_cpuset *cpus, ns_cpuset *mems, char *err, size_t errlen)
{
	cpu_set_t  *mask = CPU_ALLOC(NS_MAX_CPUS);
	size_t		size = CPU_ALLOC_SIZE(NS_MAX_CPUS);
	size_t		len;
	char	   *status;
	char	   *line;
	char		why[128];

	if (mask == NULL)
	{
		put_text(err, errlen, "out of memory");
		return false;
	}
	if (sched_getaffinity(0, size, mask) != 0)
	{
		put_text(err, errlen, "sched_getaffinity failed: %s", strerror(errno));
		CPU_FREE(mask);
		return false;
	}
	ns_cpuset_zero(cpus);
	for (int cpu = 0; cpu < NS_MAX_CPUS; cpu++)
		if (CPU_ISSET_S(cpu, size, mask))
			ns_cpuset_set(cpus, cpu);
	CPU_FREE(mask);

	status = ns_read_text_file("/proc/self/status", &len);
	if (status == NULL)
	{
		put_text(err, errlen, "could not read \"/proc/self/status\": %s", strerror(errno));
		return false;
	}
	line = strstr(status, "\nMems_allowed_list:");
	if (line == NULL)
	{
		/* a kernel without cpusets: every node is allowed */
		for (int node = 0; node < NS_MAX_NODES; node++)
			ns_cpuset_set(mems, node);
		free(status);
		return true;
	}
	line += strlen("\nMems_allowed_list:");
	while (*line == '\t' || *line == ' ')
		line++;
	if (!ns_cpuset_parse(line, strcspn(line, "\n"), NS_MAX_NODES, mems, why, sizeof(why)))
	{
		put_text(err, errlen, "malformed Mems_allowed_list in \"/proc/self/status\": %s", why);
		free(status);
		return false;
	}
	free(status);
	return true;
}
