/*
 * ns_cpuset.c - CPU sets and the kernel's CPU list syntax
 */
#include "core/ns_cpuset.h"

#include <stdio.h>
#include <string.h>

void
ns_cpuset_zero(ns_cpuset *set)
{
	memset(set, 0, sizeof(*set));
}

void
ns_cpuset_set(ns_cpuset *set, int cpu)
{
	set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

void
ns_cpuset_clear(ns_cpuset *set, int cpu)
{
	set->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool
ns_cpuset_test(const ns_cpuset *set, int cpu)
{
	if (cpu < 0 || cpu >= NS_MAX_CPUS)
		return false;
	return (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

int
ns_cpuset_count(const ns_cpuset *set)
{
	int			n = 0;

	for (size_t i = 0; i < NS_SET_WORDS(NS_MAX_CPUS); i++)
		n += __builtin_popcountll(set->bits[i]);
	return n;
}

bool
ns_cpuset_empty(const ns_cpuset *set)
{
	for (size_t i = 0; i < NS_SET_WORDS(NS_MAX_CPUS); i++)
		if (set->bits[i])
			return false;
	return true;
}

bool
ns_cpuset_equal(const ns_cpuset *a, const ns_cpuset *b)
{
	return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

void
ns_cpuset_and(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b)
{
	for (size_t i = 0; i < NS_SET_WORDS(NS_MAX_CPUS); i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

void
ns_cpuset_or(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b)
{
	for (size_t i = 0; i < NS_SET_WORDS(NS_MAX_CPUS); i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

void
ns_cpuset_andnot(ns_cpuset *dst, const ns_cpuset *a, const ns_cpuset *b)
{
	for (size_t i = 0; i < NS_SET_WORDS(NS_MAX_CPUS); i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

int
ns_cpuset_next(const ns_cpuset *set, int from)
{
	if (from < 0)
		from = 0;
	for (int w = from / 64; w < (int) NS_SET_WORDS(NS_MAX_CPUS); w++)
	{
		uint64_t	word = set->bits[w];

		if (w == from / 64)
			word &= ~UINT64_C(0) << (from % 64);
		if (word)
			return w * 64 + __builtin_ctzll(word);
	}
	return -1;
}

/* Reads a decimal number below "limit"; advances *pos. */
static bool
parse_number(const char *text, size_t len, size_t *pos, int limit, int *out,
			 char *err, size_t errlen)
{
	long		value = 0;
	size_t		start = *pos;

	while (*pos < len && text[*pos] >= '0' && text[*pos] <= '9')
	{
		value = value * 10 + (text[*pos] - '0');
		if (value >= limit)
		{
			snprintf(err, errlen, "number %.*s... is not below %d",
					 (int) (*pos - start + 1), text + start, limit);
			return false;
		}
		(*pos)++;
	}
	if (*pos == start)
	{
		if (*pos < len)
			snprintf(err, errlen, "unexpected character '%c' at offset %zu",
					 (text[*pos] >= 32 && text[*pos] < 127) ? text[*pos] : '?', *pos);
		else
			snprintf(err, errlen, "a number is missing at the end");
		return false;
	}
	*out = (int) value;
	return true;
}

bool
ns_cpuset_parse(const char *text, size_t len, int limit,
				ns_cpuset *set, char *err, size_t errlen)
{
	size_t		pos = 0;

	ns_cpuset_zero(set);
	if (limit > NS_MAX_CPUS)
		limit = NS_MAX_CPUS;

	/* sysfs files end with a newline; an empty list is just "\n" */
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (len == 0)
		return true;

	for (;;)
	{
		int			first,
					last;

		if (!parse_number(text, len, &pos, limit, &first, err, errlen))
			return false;
		last = first;
		if (pos < len && text[pos] == '-')
		{
			pos++;
			if (!parse_number(text, len, &pos, limit, &last, err, errlen))
				return false;
			if (last < first)
			{
				snprintf(err, errlen, "range %d-%d runs backwards", first, last);
				return false;
			}
		}
		for (int cpu = first; cpu <= last; cpu++)
			ns_cpuset_set(set, cpu);
		if (pos == len)
			return true;
		if (text[pos] != ',')
		{
			snprintf(err, errlen, "unexpected character '%c' at offset %zu",
					 (text[pos] >= 32 && text[pos] < 127) ? text[pos] : '?', pos);
			return false;
		}
		pos++;
	}
}

size_t
ns_cpuset_format(const ns_cpuset *set, char *buf, size_t buflen)
{
	size_t		used = 0;
	int			cpu = ns_cpuset_next(set, 0);

	if (buflen > 0)
		buf[0] = '\0';
	while (cpu >= 0)
	{
		int			last = cpu;
		char		piece[32];
		int			n;

		while (ns_cpuset_test(set, last + 1))
			last++;
		if (last == cpu)
			n = snprintf(piece, sizeof(piece), "%s%d", used ? "," : "", cpu);
		else
			n = snprintf(piece, sizeof(piece), "%s%d-%d", used ? "," : "", cpu, last);
		if (used + n < buflen)
			memcpy(buf + used, piece, n + 1);
		else if (buflen > 0)
			buf[used < buflen ? used : buflen - 1] = '\0';
		used += n;
		cpu = ns_cpuset_next(set, last + 1);
	}
	return used;
}
