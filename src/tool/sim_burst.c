/*
 * sim_burst.c - sessions alternating CPU bursts and pauses, one tick a
 * millisecond, run through three policies (see sim_burst.h):
 *
 * - numasched: each task bound to its group, or where the plan's groups
 *   share their node (numasched.group_binding = preferred) to its node's
 *   groups, its own group's CPUs first; a burst that starts where every
 *   CPU of its group runs a burst already runs in the nearest group with
 *   one that does not (ns_lend_statement), until the kernel pulls it home
 *   to an idle CPU there (its mask has both), and every lend_every ticks the
 *   core's lending (ns_lend.c, the code the extension runs) sees each
 *   group's idle CPU and waiting, and a borrowing group's overflow runs on
 *   its lender's idle CPUs;
 * - linux-like: work conserving inside a node at once (the kernel's wakeup
 *   and idle balancing), between nodes every balance_every ticks, when the
 *   waiting tasks move to the nearest node with idle CPUs and stay there; a
 *   task away from its memory for a second has its memory follow it
 *   (NUMA balancing);
 * - hard: bound to groups, nothing lent (numasched.lend_idle_cpus = off).
 *
 * Lost work is the task-time that waited for a CPU while a CPU in reach
 * (its node, then the nodes in steal order within max_steal_distance) was
 * idle: what the kernel alone would have run.  The real lending also needs
 * two ticks to see a burst begin (its first reads are baselines); the model
 * sees it at once, so its lending is a little better than the extension's.
 */
#include "tool/sim_burst.h"
#include "tool/sim.h"
#include "core/ns_lend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct burst_task
{
	int			session;		/* the session it belongs to (its leader's) */
	int			group;			/* home group (numasched, hard) */
	int			runs;			/* group its burst is counted in (numasched, hard) */
	int			at;				/* group it runs in now: runs, or home again */
	int			node;			/* node it runs on now (linux) */
	int			mem;			/* node of its memory */
	int			left;			/* CPU-ms left of its part of the burst; -1: none */
	int			away;			/* linux: ticks in a row off its memory's node */
} burst_task;

typedef struct burst_session
{
	int			pause;			/* ms until its next burst */
	int			started;		/* tick its burst began */
	int			active;			/* its tasks with work left */
} burst_session;

static double
uniform(uint64_t *state)
{
	return (sim_random_below(state, 1 << 30) + 0.5) / (double) (1 << 30);
}

/* at least 1, exponential with the mean */
static int
exponential(uint64_t *state, double mean)
{
	return 1 + (int) (-mean * log(uniform(state)));
}

static int
compare_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* Takes up to "want" idle CPUs in reach of node "from": its own first. */
static int
take_idle(const ns_plan *plan, const ns_settings *settings, int *node_idle, int from, int want)
{
	int			nn = plan->topo->nnodes;
	int			got = 0;

	for (int k = -1; k < plan->node_nsteal[from] && got < want; k++)
	{
		int			node = k < 0 ? from : plan->steal[from * nn + k];
		int			take;

		if (!ns_within_reach(plan, settings, from, node))
			break;
		take = node_idle[node] < want - got ? node_idle[node] : want - got;
		node_idle[node] -= take;
		got += take;
	}
	return got;
}

/*
 * A visitor's mask is the lent group's CPUs and its own (statement_lending.c).
 * Where it waits behind others on the lent CPUs while a CPU at home idles,
 * the kernel's idle balancing pulls it there: the one task that may go.  It
 * stays counted where its statement was lent, as in the extension.  Alone
 * on a lent CPU it stays: the kernel moves no task to even out one.
 */
static void
bring_visitors_home(const ns_plan *plan, burst_task *tasks, int ntasks, int *count)
{
	for (int i = 0; i < ntasks; i++)
	{
		burst_task *t = &tasks[i];
		int			node = plan->groups[t->group].node;
		int			home = -1;

		if (t->left <= 0 || t->at == t->group || count[t->at] <= plan->groups[t->at].ncpus)
			continue;
		if (count[t->group] < plan->groups[t->group].ncpus)
			home = t->group;
		/* where the groups of its node share the node's CPUs, any of them */
		for (int k = 0; home < 0 && plan->groups_share_node && k < plan->node_ngroups[node]; k++)
		{
			int			g = plan->node_first_group[node] + k;

			if (count[g] < plan->groups[g].ncpus)
				home = g;
		}
		if (home < 0)
			continue;
		count[t->at]--;
		count[home]++;
		t->at = home;
	}
}

void
sim_bursts(const ns_plan *plan, const ns_settings *settings, const burst_options *opt,
		   burst_policy policy, burst_result *result)
{
	int			nn = plan->topo->nnodes;
	int			ncpus = 0;
	int			nsessions;
	int			per_session = 1 + opt->workers;
	int			ntasks;
	double		parallel_share = opt->parallel_rate / 1000.0;
	double		pause_mean;
	uint64_t	rng = opt->seed;
	burst_task *tasks;
	burst_session *sessions;
	int		   *runnable;		/* task indices, by group or node */
	int		   *count;			/* runnable per group or node */
	int		   *first;
	int		   *group_idle;
	int		   *group_ran;		/* of each group's runnable tasks, those that ran */
	int		   *node_idle;
	int		   *node_waiting;
	uint64_t   *idle_us;
	uint64_t   *waited_us;
	int		   *changed;
	uint32_t   *running;		/* numasched: bursts running per group */
	uint32_t   *away;			/* numasched: per group, its bursts running elsewhere */
	ns_lending	lending = {0};
	double	   *latencies;
	long		nlatencies = 0;
	long		latency_room;
	double		latency_sum = 0;

	memset(result, 0, sizeof(*result));
	for (int g = 0; g < plan->ngroups; g++)
		ncpus += plan->groups[g].ncpus;
	nsessions = opt->sessions > 0 ? opt->sessions : 2 * ncpus;
	ntasks = nsessions * per_session;
	/* the pause that makes the sessions ask for "utilisation" of the CPUs */
	pause_mean = nsessions * opt->burst_ms * (1 + opt->workers * parallel_share) /
		(opt->utilisation / 100.0 * ncpus) - opt->burst_ms;
	if (pause_mean < 1)
		pause_mean = 1;

	tasks = calloc(ntasks, sizeof(burst_task));
	sessions = calloc(nsessions, sizeof(burst_session));
	runnable = malloc(sizeof(int) * ntasks);
	count = calloc(plan->ngroups > nn ? plan->ngroups : nn, sizeof(int));
	first = calloc((plan->ngroups > nn ? plan->ngroups : nn) + 1, sizeof(int));
	group_idle = calloc(plan->ngroups, sizeof(int));
	group_ran = calloc(plan->ngroups, sizeof(int));
	node_idle = calloc(nn, sizeof(int));
	node_waiting = calloc(nn, sizeof(int));
	idle_us = calloc(plan->ngroups, sizeof(uint64_t));
	waited_us = calloc(plan->ngroups, sizeof(uint64_t));
	changed = calloc(plan->ngroups, sizeof(int));
	running = calloc(plan->ngroups, sizeof(uint32_t));
	away = calloc(plan->ngroups, sizeof(uint32_t));
	latency_room = 1024;
	latencies = malloc(sizeof(double) * latency_room);
	if (!tasks || !sessions || !runnable || !count || !first || !group_idle || !group_ran || !node_idle ||
		!node_waiting || !idle_us || !waited_us || !changed || !running || !away || !latencies ||
		(policy == BURST_NUMASCHED && !ns_lending_alloc(plan->ngroups, &lending)))
		plan_fail("out of memory");

	/* sessions spread over the groups; a parallel burst's workers beside their leader */
	for (int s = 0; s < nsessions; s++)
	{
		int			g = s % plan->ngroups;

		for (int w = 0; w < per_session; w++)
		{
			burst_task *t = &tasks[s * per_session + w];

			t->session = s;
			t->left = -1;
			t->group = t->runs = t->at = g;
			t->node = t->mem = plan->groups[g].node;
		}
		sessions[s].pause = exponential(&rng, pause_mean);
	}

	for (int tick = 0; tick < opt->ticks; tick++)
	{
		int			nplaces = policy == BURST_LINUX ? nn : plan->ngroups;

		/* bursts begin */
		for (int s = 0; s < nsessions; s++)
		{
			burst_session *ss = &sessions[s];
			int			need;
			bool		parallel;

			if (ss->active > 0 || --ss->pause > 0)
				continue;
			need = exponential(&rng, opt->burst_ms);
			parallel = opt->workers > 0 && uniform(&rng) < parallel_share;
			ss->started = tick;
			ss->active = parallel ? per_session : 1;
			for (int w = 0; w < ss->active; w++)
			{
				burst_task *t = &tasks[s * per_session + w];

				t->left = need;
				if (policy != BURST_NUMASCHED)
					continue;
				/* where its statement starts: at home, or lent a CPU at once */
				t->runs = t->at = ns_lend_statement(plan, settings, running, away, t->group, NULL);
				running[t->runs]++;
				if (t->runs != t->group)
				{
					away[t->group]++;
					result->visits++;
					result->cross_node += plan->groups[t->runs].node != t->mem;
				}
			}
		}

		/* the runnable tasks, by where they may run: group, or node (linux) */
		memset(count, 0, sizeof(int) * nplaces);
		for (int i = 0; i < ntasks; i++)
			if (tasks[i].left > 0)
				count[policy == BURST_LINUX ? tasks[i].node : tasks[i].at]++;
		if (policy == BURST_NUMASCHED)
			bring_visitors_home(plan, tasks, ntasks, count);
		first[0] = 0;
		for (int p = 0; p < nplaces; p++)
			first[p + 1] = first[p] + count[p];
		memset(count, 0, sizeof(int) * nplaces);
		for (int i = 0; i < ntasks; i++)
			if (tasks[i].left > 0)
			{
				int			p = policy == BURST_LINUX ? tasks[i].node : tasks[i].at;

				runnable[first[p] + count[p]++] = i;
			}

		memset(node_idle, 0, sizeof(int) * nn);
		memset(node_waiting, 0, sizeof(int) * nn);
		if (policy == BURST_LINUX)
		{
			for (int n = 0; n < nn; n++)
			{
				int			cpus = plan->node_ncpus[n];
				int			run = count[n] < cpus ? count[n] : cpus;

				/* who runs rotates, as the kernel's fair share does */
				for (int k = 0; k < count[n]; k++)
				{
					burst_task *t = &tasks[runnable[first[n] + (k + tick) % count[n]]];

					if (k < run)
					{
						t->left--;
						result->demand++;
						result->local += t->node == t->mem;
						t->away = t->node == t->mem ? 0 : t->away + 1;
						/* NUMA balancing brings the memory of a task that stays away */
						if (t->away >= 1000)
							t->mem = t->node;
					}
				}
				node_idle[n] = cpus - run;
				node_waiting[n] = count[n] - run;
			}
			/* between nodes: the waiting move to the nearest idle, every balance */
			if (opt->balance_every > 0 && tick % opt->balance_every == 0)
			{
				int			idle_now[NS_MAX_NODES];

				memcpy(idle_now, node_idle, sizeof(int) * nn);
				for (int n = 0; n < nn; n++)
				{
					int			waiting = node_waiting[n];

					for (int k = 0; k < plan->node_nsteal[n] && waiting > 0; k++)
					{
						int			to = plan->steal[n * nn + k];

						if (!ns_within_reach(plan, settings, n, to))
							break;
						while (idle_now[to] > 0 && waiting > 0)
						{
							/* a waiting one: past the first "run" of the rotation */
							int			cpus = plan->node_ncpus[n];
							int			k2 = cpus + waiting - 1;
							burst_task *t = &tasks[runnable[first[n] + (k2 + tick) % count[n]]];

							t->node = to;
							idle_now[to]--;
							waiting--;
							result->cross_node++;
						}
					}
				}
			}
		}
		else
		{
			for (int g = 0; g < plan->ngroups; g++)
				group_idle[g] = plan->groups[g].ncpus;
			/* each group's own CPUs first */
			for (int g = 0; g < plan->ngroups; g++)
			{
				int			run = count[g] < plan->groups[g].ncpus ? count[g] : plan->groups[g].ncpus;

				for (int k = 0; k < run; k++)
				{
					burst_task *t = &tasks[runnable[first[g] + (k + tick) % count[g]]];

					t->left--;
					result->demand++;
					result->local += plan->groups[g].node == t->mem;
				}
				group_idle[g] -= run;
				group_ran[g] = run;
			}
			/* where the groups of a node share its CPUs: the idle ones of the node */
			if (policy == BURST_NUMASCHED && plan->groups_share_node)
				for (int g = 0; g < plan->ngroups; g++)
				{
					int			node = plan->groups[g].node;

					for (int i = 0; i < plan->node_ngroups[node] && group_ran[g] < count[g]; i++)
					{
						int			other = plan->node_first_group[node] + i;

						while (group_idle[other] > 0 && group_ran[g] < count[g])
						{
							burst_task *t = &tasks[runnable[first[g] + (group_ran[g] + tick) % count[g]]];

							t->left--;
							result->demand++;
							result->local += node == t->mem;
							group_idle[other]--;
							group_ran[g]++;
						}
					}
				}
			/* then a borrower's overflow on its lender's idle CPUs */
			for (int g = 0; g < plan->ngroups; g++)
			{
				int			lender = policy == BURST_NUMASCHED ? lending.lender[g] : -1;
				int			run = group_ran[g];
				int			over = count[g] - run;
				int			visiting = 0;

				if (lender >= 0 && over > 0 && group_idle[lender] > 0)
				{
					visiting = over < group_idle[lender] ? over : group_idle[lender];
					for (int k = run; k < run + visiting; k++)
					{
						burst_task *t = &tasks[runnable[first[g] + (k + tick) % count[g]]];

						t->left--;
						result->demand++;
						result->local += plan->groups[lender].node == t->mem;
					}
					group_idle[lender] -= visiting;
				}
				node_waiting[plan->groups[g].node] += over - visiting;
				waited_us[g] += (uint64_t) (over - visiting) * 1000;
			}
			for (int g = 0; g < plan->ngroups; g++)
			{
				node_idle[plan->groups[g].node] += group_idle[g];
				idle_us[g] += (uint64_t) group_idle[g] * 1000;
			}
			if (policy == BURST_NUMASCHED && (tick + 1) % opt->lend_every == 0)
			{
				ns_lend_sample sample = {idle_us, waited_us};
				int			n = ns_lend_tick(plan, settings, &sample, (uint64_t) opt->lend_every * 1000,
											 &lending, changed);

				for (int i = 0; i < n; i++)
				{
					int			lender = lending.lender[changed[i]];

					if (lender < 0)
						continue;
					result->lends++;
					if (plan->groups[lender].node != plan->groups[changed[i]].node)
						result->cross_node++;
				}
				memset(idle_us, 0, sizeof(uint64_t) * plan->ngroups);
				memset(waited_us, 0, sizeof(uint64_t) * plan->ngroups);
			}
		}

		/* what waited while a CPU in reach idled */
		for (int n = 0; n < nn; n++)
		{
			result->waited += node_waiting[n];
			if (node_waiting[n] > 0)
				result->lost += take_idle(plan, settings, node_idle, n, node_waiting[n]);
		}

		/* bursts end when their last task is done */
		for (int i = 0; i < ntasks; i++)
		{
			burst_task *t = &tasks[i];
			burst_session *ss = &sessions[t->session];

			if (t->left != 0)
				continue;
			t->left = -1;		/* its part of the burst is done */
			if (policy == BURST_NUMASCHED)
			{
				running[t->runs]--;
				if (t->runs != t->group)
					away[t->group]--;
				t->runs = t->at = t->group;
			}
			if (--ss->active > 0)
				continue;
			if (nlatencies == latency_room)
			{
				latency_room *= 2;
				latencies = realloc(latencies, sizeof(double) * latency_room);
				if (!latencies)
					plan_fail("out of memory");
			}
			latencies[nlatencies++] = tick + 1 - ss->started;
			ss->pause = exponential(&rng, pause_mean);
		}
	}

	if (nlatencies > 0)
	{
		qsort(latencies, nlatencies, sizeof(double), compare_double);
		result->latency_p99 = latencies[(long) (0.99 * (nlatencies - 1))];
		for (long i = 0; i < nlatencies; i++)
			latency_sum += latencies[i];
		result->latency_mean = latency_sum / nlatencies;
	}
	free(tasks);
	free(sessions);
	free(runnable);
	free(count);
	free(first);
	free(group_idle);
	free(group_ran);
	free(node_idle);
	free(node_waiting);
	free(idle_us);
	free(waited_us);
	free(changed);
	free(running);
	free(away);
	free(latencies);
	if (policy == BURST_NUMASCHED)
		ns_lending_free(&lending);
}
