/*
 * ns_cgroup.c - the server's cpu cgroup, its idle child, and moving
 * processes between them (see ns_cgroup.h)
 */
#include "os/ns_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BACKGROUND_CHILD "numasched-background"
#define NORMAL_CHILD "numasched-normal"

void
ns_cpu_cgroup(const char *pid, char *out, size_t outlen, bool *v1)
{
	char		path[64];
	char		line[4096];
	FILE	   *f;

	out[0] = '\0';
	*v1 = false;
	snprintf(path, sizeof(path), "/proc/%s/cgroup", pid);
	if ((f = fopen(path, "r")) == NULL)
		return;
	/* "id:controllers:path": the v1 line naming cpu, else v2's "0::path" */
	while (fgets(line, sizeof(line), f))
	{
		char	   *c = strchr(line, ':'),
				   *p = c ? strchr(c + 1, ':') : NULL;
		char	   *controllers = c ? c + 1 : NULL;
		bool		v1_cpu = false;

		if (p == NULL)
			continue;
		*p = '\0';
		p[1 + strcspn(p + 1, "\n")] = '\0';
		for (char *t = strtok(controllers, ","); t; t = strtok(NULL, ","))
			v1_cpu |= strcmp(t, "cpu") == 0;
		if (v1_cpu || (controllers[0] == '\0' && out[0] == '\0'))
			snprintf(out, outlen, "%s", p + 1);
		if (v1_cpu)
		{
			*v1 = true;
			break;
		}
	}
	fclose(f);
}

/*
 * Where the hierarchy is mounted here (/proc/self/mountinfo): the v1 one
 * with the cpu controller, or cgroup2; and the path of the hierarchy at the
 * mount point ("/" unless a cgroup namespace or a bind mount shows a part).
 */
static bool
mount_of(bool v1, char *point, size_t pointlen, char *root, size_t rootlen)
{
	FILE	   *f = fopen("/proc/self/mountinfo", "r");
	char		line[4096];
	bool		found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f))
	{
		char	   *fields[6] = {0};
		char	   *dash = strstr(line, " - ");
		char	   *save = NULL;
		char	   *type,
				   *options;
		int			n = 0;

		if (dash == NULL)
			continue;
		*dash = '\0';
		for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
			fields[n++] = t;
		save = NULL;
		type = strtok_r(dash + 3, " ", &save);
		(void) strtok_r(NULL, " ", &save);	/* the source */
		options = strtok_r(NULL, " \n", &save);
		if (n < 5 || type == NULL)
			continue;
		if (v1 && strcmp(type, "cgroup") == 0 && options)
		{
			for (char *t = strtok_r(options, ",", &save); t; t = strtok_r(NULL, ",", &save))
				found |= strcmp(t, "cpu") == 0;
		}
		else if (!v1 && strcmp(type, "cgroup2") == 0)
			found = true;
		if (found)
		{
			snprintf(root, rootlen, "%s", fields[3]);
			snprintf(point, pointlen, "%s", fields[4]);
		}
	}
	fclose(f);
	return found;
}

/* The directory of process "pid"'s cpu cgroup; *path its path in the hierarchy. */
static bool
cgroup_dir_of(const char *pid, char *dir, size_t dirlen, char *path, size_t pathlen, bool *v1)
{
	char		point[PATH_MAX];
	char		root[PATH_MAX];
	const char *rest;
	size_t		rootlen;

	ns_cpu_cgroup(pid, path, pathlen, v1);
	if (path[0] != '/' || !mount_of(*v1, point, sizeof(point), root, sizeof(root)))
		return false;
	rootlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(path, root, rootlen) != 0)
		return false;			/* outside what is mounted here */
	rest = path + rootlen;
	return snprintf(dir, dirlen, "%s%s", point, strcmp(rest, "/") == 0 ? "" : rest) < (int) dirlen;
}

/* Writes "text" to the file dir/name; 0 or errno. */
static int
write_to(const char *dir, const char *name, const char *text)
{
	char		path[PATH_MAX + 64];
	int			fd;
	int			err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY)) < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	if (close(fd) != 0 && err == 0)
		err = errno;
	return err;
}

static bool
make_child(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return true;
	snprintf(err, errlen, "creating %s failed: %s", dir, strerror(errno));
	return false;
}

/* cgroup v2: every process of "dir" into its child "normal" (a cgroup with children holds none). */
static bool
empty_into(const char *dir, const char *normal, char *err, size_t errlen)
{
	char		path[PATH_MAX + 64];
	char		pid[32];
	FILE	   *f;
	int			e = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "r")) == NULL)
	{
		snprintf(err, errlen, "reading %s failed: %s", path, strerror(errno));
		return false;
	}
	while (fgets(pid, sizeof(pid), f))
	{
		e = write_to(normal, "cgroup.procs", pid);
		if (e == ESRCH)
			e = 0;				/* gone meanwhile */
		if (e != 0)
			break;
	}
	fclose(f);
	if (e == 0)
		return true;
	snprintf(err, errlen, "moving the processes of %s into %s failed: %s", dir, normal, strerror(e));
	return false;
}

bool
ns_cgroup_prepare(ns_cgroup_dirs *dirs, char *err, size_t errlen)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	char		procs[PATH_MAX + 32];
	bool		v1;
	int			e;

	if (!cgroup_dir_of("self", dir, sizeof(dir), path, sizeof(path), &v1))
	{
		snprintf(err, errlen, "no cpu cgroup hierarchy is mounted here");
		return false;
	}
	if (strcmp(path, "/") == 0)
	{
		snprintf(err, errlen, "the server is in the root cpu cgroup");
		return false;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (access(procs, W_OK) != 0)
	{
		snprintf(err, errlen, "its cpu cgroup %s is not the server's to change (%s)", dir, strerror(errno));
		return false;
	}
	if (snprintf(dirs->background, sizeof(dirs->background), "%s/" BACKGROUND_CHILD, dir) >= (int) sizeof(dirs->background) ||
		snprintf(dirs->normal, sizeof(dirs->normal), v1 ? "%s" : "%s/" NORMAL_CHILD, dir) >= (int) sizeof(dirs->normal))
	{
		snprintf(err, errlen, "the path of its cpu cgroup is too long");
		return false;
	}
	if (!make_child(dirs->background, err, errlen))
		return false;
	if (!v1)
	{
		if (!make_child(dirs->normal, err, errlen) || !empty_into(dir, dirs->normal, err, errlen))
			return false;
		if ((e = write_to(dir, "cgroup.subtree_control", "+cpu")) != 0)
		{
			snprintf(err, errlen, "turning the cpu controller on below %s failed: %s (is cpu in its cgroup.controllers?)",
					 dir, strerror(e));
			return false;
		}
	}
	if ((e = write_to(dirs->background, "cpu.idle", "1")) != 0)
	{
		snprintf(err, errlen, "setting cpu.idle of %s failed: %s%s", dirs->background, strerror(e),
				 e == ENOENT ? " (the kernel has it from 5.15 on)" : "");
		return false;
	}
	return true;
}

bool
ns_cgroup_move(pid_t pid, const char *dir, char *err, size_t errlen)
{
	char		text[32];
	int			e;

	snprintf(text, sizeof(text), "%d\n", (int) (pid ? pid : getpid()));
	if ((e = write_to(dir, "cgroup.procs", text)) == 0)
		return true;
	snprintf(err, errlen, "moving process %d into %s failed: %s", (int) (pid ? pid : getpid()), dir, strerror(e));
	return false;
}

int
ns_cgroup_in(pid_t pid, const char *dir)
{
	char		p[32];
	char		its[PATH_MAX];
	char		path[PATH_MAX];
	bool		v1;

	snprintf(p, sizeof(p), "%d", (int) (pid ? pid : getpid()));
	if (!cgroup_dir_of(p, its, sizeof(its), path, sizeof(path), &v1))
		return -1;
	return strcmp(its, dir) == 0;
}
