/*
 * fuzz_sysfs.c - libFuzzer target for the sysfs topology reader
 *
 * The input is cut at NUL bytes into the files of a small two-node tree
 * (cpu/online, each node's cpulist, distance and meminfo, and the LLC and
 * sibling lists of CPU 0), written to a scratch directory and loaded.  The
 * reader must either refuse with a message or return a topology whose
 * invariants hold; building a plan on it must not crash either.
 */
#include "core/ns_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
	"devices/system/cpu/online",
	"devices/system/node/node0/cpulist",
	"devices/system/node/node0/distance",
	"devices/system/node/node0/meminfo",
	"devices/system/node/node1/cpulist",
	"devices/system/node/node1/distance",
	"devices/system/node/node1/meminfo",
	"devices/system/cpu/cpu0/cache/index3/shared_cpu_list",
	"devices/system/cpu/cpu0/topology/thread_siblings_list",
};

static const char *const dirs[] = {
	"devices", "devices/system", "devices/system/cpu", "devices/system/node",
	"devices/system/node/node0", "devices/system/node/node1",
	"devices/system/cpu/cpu0", "devices/system/cpu/cpu0/cache",
	"devices/system/cpu/cpu0/cache/index3", "devices/system/cpu/cpu0/topology",
};

#define LENGTH(a) (sizeof(a) / sizeof((a)[0]))

static char root[256];

static void
remove_tree(void)
{
	char		path[512];

	for (size_t i = 0; i < LENGTH(files); i++)
	{
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		unlink(path);
	}
	for (size_t i = LENGTH(dirs); i > 0; i--)
	{
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i - 1]);
		rmdir(path);
	}
	rmdir(root);
}

/* a tmpfs keeps the many small writes off the disk */
static void
make_dirs(void)
{
	char		path[512];

	snprintf(root, sizeof(root), "%s/numasched-fuzz-%d",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int) getpid());
	mkdir(root, 0700);
	for (size_t i = 0; i < LENGTH(dirs); i++)
	{
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		mkdir(path, 0700);
	}
	atexit(remove_tree);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	const uint8_t *end = data + size;
	char		path[512];
	char		err[NS_ERRLEN];
	ns_topology *topo;

	if (root[0] == '\0')
		make_dirs();
	for (size_t i = 0; i < LENGTH(files); i++)
	{
		const uint8_t *cut = p < end ? memchr(p, '\0', end - p) : NULL;
		size_t		len = cut ? (size_t) (cut - p) : (size_t) (end - p);
		FILE	   *f;

		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		/* an empty piece means "the file is missing" */
		if (len == 0)
			unlink(path);
		else if ((f = fopen(path, "w")) != NULL)
		{
			fwrite(p, 1, len, f);
			fclose(f);
		}
		p = cut ? cut + 1 : end;
	}

	topo = ns_topology_load(root, NULL, err, sizeof(err));
	if (topo == NULL)
	{
		if (err[0] == '\0')
			abort();			/* refused without saying why */
		return 0;
	}
	for (int n = 0; n < topo->nnodes; n++)
	{
		if (ns_distance(topo, n, n) < 1 || topo->nodes[n].ncpus != ns_cpuset_count(&topo->nodes[n].cpus))
			abort();
	}
	for (int gpn = 0; gpn < 3; gpn++)
	{
		ns_plan    *plan = ns_plan_build(topo, gpn, NULL, err, sizeof(err));
		int			cpus = 0;

		if (plan == NULL)
			continue;
		for (int g = 0; g < plan->ngroups; g++)
		{
			if (plan->groups[g].ncpus <= 0)
				abort();		/* an empty group could never be bound to */
			cpus += plan->groups[g].ncpus;
		}
		if (cpus != ns_cpuset_count(&topo->usable))
			abort();
		ns_plan_free(plan);
	}
	ns_topology_free(topo);
	return 0;
}
