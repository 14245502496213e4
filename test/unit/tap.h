/*
 * tap.h - the smallest TAP producer, for the core's C tests
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int	tap_count = 0;
static int	tap_failed = 0;

static void tap_ok(int pass, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
tap_ok(int pass, const char *fmt,...)
{
	va_list		ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define is_int(got, want, ...) do { \
	long _g = (long) (got), _w = (long) (want); \
	tap_ok(_g == _w, __VA_ARGS__); \
	if (_g != _w) printf("#   got %ld, want %ld (%s)\n", _g, _w, #got); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *_g = (got), *_w = (want); \
	int _same = _g && _w && strcmp(_g, _w) == 0; \
	tap_ok(_same, __VA_ARGS__); \
	if (!_same) printf("#   got \"%s\", want \"%s\"\n", _g ? _g : "(null)", _w ? _w : "(null)"); \
} while (0)

#define contains(text, part, ...) do { \
	const char *_t = (text), *_p = (part); \
	int _in = _t && strstr(_t, _p) != NULL; \
	tap_ok(_in, __VA_ARGS__); \
	if (!_in) printf("#   \"%s\" does not contain \"%s\"\n", _t ? _t : "(null)", _p); \
} while (0)

static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
