/* bench/settle/clock.h: a monotonic clock in milliseconds for the cost programs */
#ifndef SETTLE_CLOCK_H
#define SETTLE_CLOCK_H

#include <time.h>

static inline double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
