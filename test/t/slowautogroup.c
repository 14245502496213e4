/*
 * slowautogroup.c - an LD_PRELOAD shim for the lock tests: in a process
 * whose command line holds $SLOWAUTOGROUP_IN, the answer to each write of
 * an autogroup's nice (/proc/PID/autogroup, flushed by fclose) comes back
 * $SLOWAUTOGROUP_MS late, as a busy machine may delay it, so that another
 * process's change of the same priority falls in between.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* whether this process's command line holds "text" */
static int
command_holds(const char *text)
{
	char		cmdline[512];
	int			fd = open("/proc/self/cmdline", O_RDONLY);
	ssize_t		n = fd >= 0 ? read(fd, cmdline, sizeof(cmdline) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	cmdline[n] = '\0';
	return strstr(cmdline, text) != NULL;
}

int
fclose(FILE *f)
{
	static int (*real_fclose) (FILE *);
	const char *ms = getenv("SLOWAUTOGROUP_MS");
	const char *in = getenv("SLOWAUTOGROUP_IN");
	char		link[64];
	char		path[PATH_MAX];
	ssize_t		n;
	int			result;

	if (real_fclose == NULL)
		real_fclose = (int (*) (FILE *)) dlsym(RTLD_NEXT, "fclose");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fileno(f));
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 10 || ms == NULL || in == NULL)
		return real_fclose(f);
	path[n] = '\0';
	if (strcmp(path + n - 10, "/autogroup") != 0 || !command_holds(in))
		return real_fclose(f);
	result = real_fclose(f);
	usleep(atoi(ms) * 1000);
	return result;
}
