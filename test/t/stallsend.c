/*
 * stallsend.c - an LD_PRELOAD shim for the lock tests: a client that stops
 * reading.  A process sending a message that holds $STALLSEND_TEXT to its
 * client waits $STALLSEND_SECONDS first, as it would on a full socket.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t
send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real_send) (int, const void *, size_t, int);
	const char *text = getenv("STALLSEND_TEXT");
	const char *seconds = getenv("STALLSEND_SECONDS");

	if (real_send == NULL)
		real_send = (ssize_t (*) (int, const void *, size_t, int)) dlsym(RTLD_NEXT, "send");
	if (text && *text && memmem(buf, len, text, strlen(text)))
		sleep(seconds ? atoi(seconds) : 4);
	return real_send(fd, buf, len, flags);
}
