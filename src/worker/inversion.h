/*
 * inversion.h - background lock holders raised
 */
#ifndef NUMASCHED_WORKER_INVERSION_H
#define NUMASCHED_WORKER_INVERSION_H

#include "postgres.h"

/*
 * Background lock holders raised while normal processes wait for them, and
 * autogroup nice values tried again (inversion.c), every 100 ms.
 */
extern void numasched_inversion_start(void);
/* False while no process is at background priority or waits for its autogroup change: nothing to do. */
extern bool numasched_inversion_tick(void);

#endif							/* NUMASCHED_WORKER_INVERSION_H */
