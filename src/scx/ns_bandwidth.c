/*
 * ns_bandwidth.c - the cgroup bandwidth limits the companion does not keep.
 *
 * A sched_ext scheduler that takes every task replaces the fair class's
 * bandwidth control: a cgroup's cpu.max (systemd's CPUQuota=) then limits
 * nothing, and no kernel says so.  The loader walks the cgroup tree once at
 * start and names each cgroup with a quota, so that an operator learns it
 * from the journal, not from a job that ran unthrottled.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ns_bandwidth.h"

#include <ftw.h>
#include <mntent.h>
#include <stdlib.h>
#include <string.h>

static FILE *report_out;
static int	report_max;
static int	report_count;

static int
visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char		file[4096];
	char		quota[32] = "";
	long		period = 0;
	FILE	   *f;

	(void) st;
	(void) ftw;
	if (type != FTW_D || snprintf(file, sizeof(file), "%s/cpu.max", path) >= (int) sizeof(file))
		return 0;
	if ((f = fopen(file, "r")) == NULL)
		return 0;
	/* "max 100000" is no limit; "50000 100000" half a CPU */
	if (fscanf(f, "%31s %ld", quota, &period) == 2 && strcmp(quota, "max") != 0)
	{
		if (report_count < report_max)
			fprintf(report_out, "numasched-scx: %s: cpu.max %s %ld will not apply: this scheduler implements no cgroup bandwidth control\n",
					path, quota, period);
		report_count++;
	}
	fclose(f);
	return 0;
}

int
ns_report_bandwidth_limits(const char *root, FILE *out, int max_lines)
{
	report_out = out;
	report_max = max_lines;
	report_count = 0;
	if (root)
		nftw(root, visit, 16, FTW_PHYS | FTW_MOUNT);
	if (report_count > max_lines)
		fprintf(out, "numasched-scx: and %d more with a cpu.max that will not apply\n",
				report_count - max_lines);
	return report_count;
}

const char *
ns_cgroup2_root(void)
{
	static char root[4096];
	FILE	   *mounts = setmntent("/proc/self/mounts", "r");
	struct mntent *m;

	if (!mounts)
		return NULL;
	root[0] = '\0';
	while ((m = getmntent(mounts)) != NULL)
		if (strcmp(m->mnt_type, "cgroup2") == 0 && strlen(m->mnt_dir) < sizeof(root))
		{
			strcpy(root, m->mnt_dir);
			break;
		}
	endmntent(mounts);
	return root[0] ? root : NULL;
}
