/*
 * busy_threads N SECONDS: N threads that never sleep for SECONDS, then exit.
 * The companion's test starts it as another user to keep N tasks runnable
 * at once, as a runaway job would; small stacks, so that 10,000 fit a
 * test VM.  The threads wait at a gate until all are made: a creator that
 * competes with the threads it made already would take minutes for the
 * last ones (each new thread leaves it a smaller share).  Prints how many
 * threads it started.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int gate;
static atomic_bool stop;

static void *
spin(void *arg)
{
	(void) arg;
	/* a futex, not a condition variable: nothing to take on the way out */
	while (atomic_load(&gate) == 0)
		syscall(SYS_futex, &gate, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

int
main(int argc, char **argv)
{
	int			wanted,
				started = 0;
	pthread_attr_t attr;
	pthread_t  *threads;

	if (argc != 3 || (wanted = atoi(argv[1])) <= 0)
	{
		fprintf(stderr, "usage: busy_threads N SECONDS\n");
		return 2;
	}
	threads = calloc(wanted, sizeof(*threads));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	while (started < wanted && pthread_create(&threads[started], &attr, spin, NULL) == 0)
		started++;
	printf("busy_threads: %d of %d started\n", started, wanted);
	fflush(stdout);
	atomic_store(&gate, 1);
	syscall(SYS_futex, &gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	sleep(atoi(argv[2]));
	atomic_store(&stop, true);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	return started == wanted ? 0 : 1;
}
