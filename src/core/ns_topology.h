/*
 * ns_topology.h - NUMA topology as numasched sees it, read from sysfs
 *
 * Part of the numasched core (no PostgreSQL header).  The topology is what
 * the machine offers this process: nodes with usable CPUs (online and in the
 * process's affinity mask), CPU-less memory nodes whose memory it may use,
 * the SLIT distances between them, SMT siblings and LLC domains.
 */
#ifndef NS_TOPOLOGY_H
#define NS_TOPOLOGY_H

#include "core/ns_cpuset.h"

#define NS_ERRLEN 512
#define NS_LOCAL_DISTANCE 10

typedef struct ns_node
{
	int			id;				/* the OS's node id; ids may be sparse */
	bool		has_cpus;		/* false: a CPU-less memory node */
	ns_cpuset	cpus;			/* usable CPUs, in CPU order */
	int			ncpus;
	uint64_t	memory_kb;		/* MemTotal from the node's meminfo */
	bool		memory_allowed; /* in the process's allowed memory nodes */
} ns_node;

typedef struct ns_topology
{
	int			nnodes;			/* CPU nodes and memory-only nodes, by id */
	ns_node    *nodes;
	uint8_t    *distance;		/* nnodes x nnodes, by node index */
	ns_cpuset	usable;			/* all usable CPUs */
	/* per CPU: lowest CPU of its SMT core, and of its LLC domain (-1: none) */
	int16_t    *core_leader;
	int16_t    *llc_leader;
	bool		has_llc;		/* some CPU had an LLC (index3) entry */
} ns_topology;

/*
 * What the process may use.  A NULL member means "no restriction".  "mems" is
 * a set of node ids.
 */
typedef struct ns_limits
{
	const ns_cpuset *cpus;
	const ns_cpuset *mems;
} ns_limits;

/*
 * Reads the topology below sysfs_root (normally "/sys").  On failure returns
 * NULL and writes a one-line message naming the file into err.
 */
ns_topology *ns_topology_load(const char *sysfs_root, const ns_limits *limits,
							  char *err, size_t errlen);
void		ns_topology_free(ns_topology *topo);

/* Is the node's memory ours to use (cpuset mems), and is there any? */
static inline bool
ns_node_memory_usable(const ns_node *node)
{
	return node->memory_allowed && node->memory_kb > 0;
}

/*
 * The nodes whose memory the process may use (ids into "ids"), only those
 * with usable CPUs when "with_cpus"; returns how many.
 */
int			ns_topology_memory_nodes(const ns_topology *topo, bool with_cpus, ns_cpuset *ids);

/* Index of the node with OS id "id", or -1. */
int			ns_topology_node_index(const ns_topology *topo, int id);

static inline int
ns_distance(const ns_topology *topo, int from, int to)
{
	return topo->distance[from * topo->nnodes + to];
}

/*
 * The limits of the calling process: its CPU affinity mask and
 * Mems_allowed_list from /proc/self/status.  Returns false with a message on
 * failure.
 */
bool		ns_process_limits(ns_cpuset *cpus, ns_cpuset *mems,
							  char *err, size_t errlen);

/*
 * Reads a small text file whole (NUL-terminated).  Returns a malloc'd
 * buffer, or NULL with errno set.  Shared with the OS layer's /proc readers.
 */
char	   *ns_read_text_file(const char *path, size_t *len);

#endif							/* NS_TOPOLOGY_H */
