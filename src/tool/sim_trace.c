/*
 * sim_trace.c - the simulator's trace: generated from a seed or read from a
 * file
 *
 * A seeded synthetic trace (sessions arriving and leaving, some idle and
 * some busy; parallel queries with W workers) is generated once, or read
 * from a hand-written file, and then replayed through numasched's placement
 * and rebalance and through the baselines (sim_replay.c).
 */
#include "tool/sim.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64: small, seedable, and the same on every platform */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

int
sim_random_below(uint64_t *state, int n)
{
	return (int) (next_random(state) % (uint64_t) n);
}

/* exponential-ish lifetime with the given mean, at least one tick */
static int
random_lifetime(uint64_t *state, int mean)
{
	return 1 + sim_random_below(state, 2 * mean);
}

void
sim_make_trace(const sim_options *opt, sim_trace *trace)
{
	uint64_t	rng = opt->seed;
	int			cap = opt->sessions * 2 + 16;
	int			qcap = 1024;

	trace->nsessions = 0;
	trace->sessions = malloc(cap * sizeof(sim_session));
	trace->nqueries = 0;
	trace->queries = malloc(qcap * sizeof(sim_query));

	for (int t = 0; t < opt->ticks; t++)
	{
		/* at t = 0 the server already has its sessions */
		int			arrivals = t == 0 ? opt->sessions : 0;

		if (t > 0)
		{
			/* about sessions/lifetime arrivals per tick */
			long		per_mille = (long) opt->sessions * 1000 / opt->lifetime;

			arrivals = (int) (per_mille / 1000);
			if (sim_random_below(&rng, 1000) < per_mille % 1000)
				arrivals++;
		}
		for (int a = 0; a < arrivals; a++)
		{
			sim_session *s;

			if (trace->nsessions == cap)
			{
				cap *= 2;
				trace->sessions = realloc(trace->sessions, cap * sizeof(sim_session));
			}
			s = &trace->sessions[trace->nsessions++];
			s->arrive = t;
			s->leave = t + random_lifetime(&rng, opt->lifetime);
			/* 60% of sessions keep a CPU busy, the rest mostly wait */
			s->weight = sim_random_below(&rng, 100) < 60 ? NS_CPU_LOAD : NS_CPU_LOAD / 20;
		}
	}
	/* parallel queries: a session runs at most one at a time */
	for (int i = 0; i < trace->nsessions; i++)
	{
		sim_session *s = &trace->sessions[i];
		int			end = opt->ticks < s->leave ? opt->ticks : s->leave;

		for (int t = s->arrive + 1; t < end; t++)
		{
			if (sim_random_below(&rng, 1000) >= opt->parallel_rate)
				continue;
			if (trace->nqueries == qcap)
			{
				qcap *= 2;
				trace->queries = realloc(trace->queries, qcap * sizeof(sim_query));
			}
			trace->queries[trace->nqueries].session = i;
			trace->queries[trace->nqueries].start = t;
			t += 5 + sim_random_below(&rng, 36);
			trace->queries[trace->nqueries].end = t < end ? t : end;
			trace->nqueries++;
		}
	}
}

/*
 * A trace written by hand (--trace FILE), for checks whose locality can be
 * worked out on paper: one line per session, "session ARRIVE LEAVE busy|idle",
 * and per parallel query, "query SESSION START END" (SESSION counts the
 * session lines from 0); "#" starts a comment.
 */
void
sim_read_trace(const char *path, const sim_options *opt, sim_trace *trace)
{
	FILE	   *f = fopen(path, "r");
	char		line[256];
	int			lineno = 0;
	int			cap = 16,
				qcap = 16;

	if (f == NULL)
		plan_fail("cannot read the trace \"%s\"", path);
	trace->nsessions = trace->nqueries = 0;
	trace->sessions = malloc(cap * sizeof(sim_session));
	trace->queries = malloc(qcap * sizeof(sim_query));
	while (fgets(line, sizeof(line), f))
	{
		char		word[16],
					kind[16];
		int			a,
					b,
					c,
					n;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		if (sscanf(line, "%15s", word) != 1)
			continue;
		if (strcmp(word, "session") == 0 &&
			sscanf(line, "%*s %d %d %15s %n", &a, &b, kind, &n) == 3 && line[n] == '\0' &&
			a >= 0 && b > a && (strcmp(kind, "busy") == 0 || strcmp(kind, "idle") == 0))
		{
			if (trace->nsessions == cap)
				trace->sessions = realloc(trace->sessions, (cap *= 2) * sizeof(sim_session));
			trace->sessions[trace->nsessions].arrive = a;
			trace->sessions[trace->nsessions].leave = b;
			trace->sessions[trace->nsessions++].weight = kind[0] == 'b' ? NS_CPU_LOAD : NS_CPU_LOAD / 20;
		}
		else if (strcmp(word, "query") == 0 &&
				 sscanf(line, "%*s %d %d %d %n", &a, &b, &c, &n) == 3 && line[n] == '\0' &&
				 a >= 0 && a < trace->nsessions && b > trace->sessions[a].arrive && c > b &&
				 c <= trace->sessions[a].leave)
		{
			if (trace->nqueries == qcap)
				trace->queries = realloc(trace->queries, (qcap *= 2) * sizeof(sim_query));
			trace->queries[trace->nqueries].session = a;
			trace->queries[trace->nqueries].start = b;
			trace->queries[trace->nqueries++].end = c;
		}
		else
			plan_fail("%s:%d: expected \"session ARRIVE LEAVE busy|idle\" or \"query SESSION START END\" "
					  "(a query inside its session's life, after it arrives), not \"%s\"", path, lineno, line);
	}
	fclose(f);
	for (int i = 1; i < trace->nsessions; i++)
		if (trace->sessions[i].arrive < trace->sessions[i - 1].arrive)
			plan_fail("%s: sessions must be listed in the order they arrive", path);
	(void) opt;
}

int
sim_compare_query_start(const void *a, const void *b)
{
	const sim_query *x = a,
			   *y = b;

	if (x->start != y->start)
		return x->start - y->start;
	return x->session - y->session;
}
