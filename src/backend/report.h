/*
 * report.h - what numasched says to a client or the log
 */
#ifndef NUMASCHED_BACKEND_REPORT_H
#define NUMASCHED_BACKEND_REPORT_H

#include "postgres.h"

/*
 * A message to send once the lock is released (numasched_release): a
 * message can block on a client's full socket, so none is sent while the
 * lock is held.
 */
extern void numasched_report_later(int elevel, const char *fmt,...) pg_attribute_printf(2, 3);

/* Sends them: numasched_release does, once the lock is released. */
extern void numasched_send_reported(void);

typedef enum numasched_failure
{
	FAILURE_AFFINITY,
	FAILURE_UNBIND,
	FAILURE_MEMORY_POLICY,
	FAILURE_SETTLE,
	FAILURE_PRIORITY,
	FAILURE_EXECUTOR
} numasched_failure;

/* A WARNING once per process and kind of failure (bind_failures is counted where it failed). */
extern void numasched_warn_failure(numasched_failure kind, const char *err, const char *fmt,...) pg_attribute_printf(3, 4);

#endif							/* NUMASCHED_BACKEND_REPORT_H */
