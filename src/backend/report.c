/*
 * report.c - what numasched says to a client or the log
 *
 * Nothing is said while numasched's lock is held: a message can block on a
 * client's full socket, and with the lock held (and interrupts off) every
 * login and the scheduler would wait for that client.  Messages found under
 * the lock are kept and sent once it is released; a failure of the kernel's
 * is said once per process and kind.
 */
#include "postgres.h"

#include "backend/report.h"
#include "backend/settings.h"
#include "backend/state.h"

/*
 * Messages found while the lock was held, sent once it is released: a
 * message can block on a client's full socket, and with the lock held (and
 * interrupts off) every login and the scheduler would wait for that client.
 * A few are kept; more in one hold are dropped (what failed is counted).
 */
#define PENDING_MESSAGES 4

typedef struct pending_message
{
	int			elevel;
	char		text[NS_ERRLEN + 256];
} pending_message;

static pending_message pending[PENDING_MESSAGES];
static int	npending = 0;

void
numasched_send_reported(void)
{
	pending_message sending[PENDING_MESSAGES];
	int			n = npending;

	numasched_assert_unlocked();
	/* copied first: a message may be found again while these are sent */
	memcpy(sending, pending, n * sizeof(pending_message));
	npending = 0;
	for (int i = 0; i < n; i++)
		ereport(sending[i].elevel, (errmsg_internal("%s", sending[i].text)));
}

void
numasched_report_later(int elevel, const char *fmt,...)
{
	va_list		args;

	if (npending == PENDING_MESSAGES || !message_level_is_interesting(elevel))
		return;
	pending[npending].elevel = elevel;
	va_start(args, fmt);
	vsnprintf(pending[npending].text, sizeof(pending[npending].text), fmt, args);
	va_end(args);
	npending++;
}

/*
 * One WARNING per process and kind of failure (counted where it failed); the message
 * is formatted only when it is sent (the scheduler may fail to place many a
 * worker in its life, and would keep every message made for nothing).
 */
void
numasched_warn_failure(numasched_failure kind, const char *err, const char *fmt,...)
{
	static int	warned = 0;
	char		message[256];
	va_list		args;

	numasched_assert_unlocked();
	if (warned & (1 << kind))
		return;
	warned |= 1 << kind;
	va_start(args, fmt);
	vsnprintf(message, sizeof(message), fmt, args);
	va_end(args);
	ereport(WARNING,
			(errmsg_internal("%s", message),
			 errdetail_from_core(err)));
}
