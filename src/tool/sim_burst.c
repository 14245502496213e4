/*
 * sim_burst.c - sessions alternating CPU bursts and pauses, one tick a
 * millisecond, run through four policies (see sim_burst.h):
 *
 * - preferred (numasched's default, node_binding = preferred): the
 *   linux-like balancing below over the nodes in reach, every task starting
 *   on its home node with its memory there for good, and every home_every
 *   ticks numasched's look brings home a task running away while a CPU of
 *   its node was idle through the look;
 * - strict: each task bound to its group, or where the plan's groups
 *   share their node (numasched.group_binding = preferred) to its node's
 *   groups, its own group's CPUs first; a burst that starts where every
 *   CPU of its group runs a burst already runs in the nearest group with
 *   one that does not (ns_lend_statement), until the kernel pulls it home
 *   to an idle CPU there (its mask has both), and every lend_every ticks the
 *   core's lending (ns_lend.c, the code the extension runs) sees each
 *   group's idle CPU and waiting, and a borrowing group's overflow runs on
 *   its lender's idle CPUs;
 * - linux-like: work conserving inside a node at once (the kernel's wakeup
 *   and idle balancing); between nodes the waiting tasks move to the
 *   nearest node with idle CPUs and stay there, at once to a CPU that just
 *   went idle (newidle balance), every balance_every ticks to one idle
 *   already; a task away from its memory for a second has its memory
 *   follow it (NUMA balancing);
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

/* One run's state: its tasks and sessions, and each tick's scratch. */
typedef struct burst_sim
{
	const ns_plan *plan;
	const ns_settings *settings;
	const burst_options *opt;
	burst_policy policy;
	burst_result *result;
	int			nn;
	int			nsessions;
	int			per_session;
	int			ntasks;
	double		parallel_share;
	double		pause_mean;
	uint64_t	rng;
	burst_task *tasks;
	burst_session *sessions;
	int		   *runnable;		/* task indices, by group or node */
	int		   *count;			/* runnable per group or node */
	int		   *first;
	int		   *group_idle;
	int		   *group_ran;		/* of each group's runnable tasks, those that ran */
	int		   *node_idle;
	int		   *node_idle_before;	/* at the last tick: a CPU that went idle since balances at once */
	int		   *node_idle_least;	/* preferred: the fewest idle CPUs since numasched's last look */
	int		   *node_waiting;
	uint64_t   *idle_us;
	uint64_t   *waited_us;
	int		   *changed;
	uint32_t   *running;		/* numasched: bursts running per group */
	uint32_t   *away;			/* numasched: per group, its bursts running elsewhere */
	ns_lending	lending;
	double	   *latencies;
	long		nlatencies;
	long		latency_room;
} burst_sim;

/* The arrays, the sessions spread over the groups, a parallel burst's workers beside their leader. */
static void
burst_sim_start(burst_sim *sim)
{
	const ns_plan *plan = sim->plan;
	const burst_options *opt = sim->opt;
	int			nn = sim->nn;
	int			places = plan->ngroups > nn ? plan->ngroups : nn;
	int			ncpus = 0;

	for (int g = 0; g < plan->ngroups; g++)
		ncpus += plan->groups[g].ncpus;
	sim->nsessions = opt->sessions > 0 ? opt->sessions : 2 * ncpus;
	sim->per_session = 1 + opt->workers;
	sim->ntasks = sim->nsessions * sim->per_session;
	sim->parallel_share = opt->parallel_rate / 1000.0;
	/* the pause that makes the sessions ask for "utilisation" of the CPUs */
	sim->pause_mean = sim->nsessions * opt->burst_ms * (1 + opt->workers * sim->parallel_share) /
		(opt->utilisation / 100.0 * ncpus) - opt->burst_ms;
	if (sim->pause_mean < 1)
		sim->pause_mean = 1;
	sim->rng = opt->seed;

	sim->tasks = calloc(sim->ntasks, sizeof(burst_task));
	sim->sessions = calloc(sim->nsessions, sizeof(burst_session));
	sim->runnable = malloc(sizeof(int) * sim->ntasks);
	sim->count = calloc(places, sizeof(int));
	sim->first = calloc(places + 1, sizeof(int));
	sim->group_idle = calloc(plan->ngroups, sizeof(int));
	sim->group_ran = calloc(plan->ngroups, sizeof(int));
	sim->node_idle = calloc(nn, sizeof(int));
	sim->node_idle_before = calloc(nn, sizeof(int));
	sim->node_idle_least = calloc(nn, sizeof(int));
	sim->node_waiting = calloc(nn, sizeof(int));
	sim->idle_us = calloc(plan->ngroups, sizeof(uint64_t));
	sim->waited_us = calloc(plan->ngroups, sizeof(uint64_t));
	sim->changed = calloc(plan->ngroups, sizeof(int));
	sim->running = calloc(plan->ngroups, sizeof(uint32_t));
	sim->away = calloc(plan->ngroups, sizeof(uint32_t));
	sim->latency_room = 1024;
	sim->latencies = malloc(sizeof(double) * sim->latency_room);
	if (!sim->tasks || !sim->sessions || !sim->runnable || !sim->count || !sim->first ||
		!sim->group_idle || !sim->group_ran || !sim->node_idle || !sim->node_idle_before ||
		!sim->node_idle_least || !sim->node_waiting ||
		!sim->idle_us || !sim->waited_us || !sim->changed || !sim->running || !sim->away ||
		!sim->latencies ||
		(sim->policy == BURST_STRICT && !ns_lending_alloc(plan->ngroups, &sim->lending)))
		plan_fail("out of memory");

	for (int s = 0; s < sim->nsessions; s++)
	{
		int			g = s % plan->ngroups;

		for (int w = 0; w < sim->per_session; w++)
		{
			burst_task *t = &sim->tasks[s * sim->per_session + w];

			t->session = s;
			t->left = -1;
			t->group = t->runs = t->at = g;
			t->node = t->mem = plan->groups[g].node;
		}
		sim->sessions[s].pause = exponential(&sim->rng, sim->pause_mean);
	}
	for (int n = 0; n < nn; n++)
		sim->node_idle_before[n] = sim->node_idle_least[n] = plan->node_ncpus[n];
}

/* Bursts begin; under numasched each where its statement starts: at home, or lent a CPU at once. */
static void
begin_bursts(burst_sim *sim, int tick)
{
	for (int s = 0; s < sim->nsessions; s++)
	{
		burst_session *ss = &sim->sessions[s];
		int			need;
		bool		parallel;

		if (ss->active > 0 || --ss->pause > 0)
			continue;
		need = exponential(&sim->rng, sim->opt->burst_ms);
		parallel = sim->opt->workers > 0 && uniform(&sim->rng) < sim->parallel_share;
		ss->started = tick;
		ss->active = parallel ? sim->per_session : 1;
		for (int w = 0; w < ss->active; w++)
		{
			burst_task *t = &sim->tasks[s * sim->per_session + w];

			t->left = need;
			if (sim->policy != BURST_STRICT)
				continue;
			t->runs = t->at = ns_lend_statement(sim->plan, sim->settings, sim->running, sim->away, t->group, NULL);
			sim->running[t->runs]++;
			if (t->runs != t->group)
			{
				sim->away[t->group]++;
				sim->result->visits++;
				sim->result->cross_node += sim->plan->groups[t->runs].node != t->mem;
			}
		}
	}
}

/* Where the kernel runs a task on any CPU of its node: linux and preferred. */
static bool
by_node(const burst_sim *sim)
{
	return sim->policy == BURST_LINUX || sim->policy == BURST_PREFERRED;
}

/* The runnable tasks, by where they may run: group, or node (linux, preferred). */
static void
sort_runnable(burst_sim *sim, int nplaces)
{
	int		   *count = sim->count;

	memset(count, 0, sizeof(int) * nplaces);
	for (int i = 0; i < sim->ntasks; i++)
		if (sim->tasks[i].left > 0)
			count[by_node(sim) ? sim->tasks[i].node : sim->tasks[i].at]++;
	if (sim->policy == BURST_STRICT)
		bring_visitors_home(sim->plan, sim->tasks, sim->ntasks, count);
	sim->first[0] = 0;
	for (int p = 0; p < nplaces; p++)
		sim->first[p + 1] = sim->first[p] + count[p];
	memset(count, 0, sizeof(int) * nplaces);
	for (int i = 0; i < sim->ntasks; i++)
		if (sim->tasks[i].left > 0)
		{
			int			p = by_node(sim) ? sim->tasks[i].node : sim->tasks[i].at;

			sim->runnable[sim->first[p] + count[p]++] = i;
		}
}

/* The k-th runnable task of place "p" this tick: who runs rotates, as the kernel's fair share does. */
static burst_task *
runnable_task(burst_sim *sim, int p, int k, int tick)
{
	return &sim->tasks[sim->runnable[sim->first[p] + (k + tick) % sim->count[p]]];
}

/* A millisecond of CPU for task "t" on node "node". */
static void
run_task(burst_sim *sim, burst_task *t, int node)
{
	t->left--;
	sim->result->demand++;
	sim->result->local += node == t->mem;
}

/*
 * Linux-like: work conserving inside a node at once; between nodes, the
 * waiting move to the nearest idle node and stay there: at once to a CPU
 * that just went idle (its newidle balance), to one idle already at the
 * next balance (the idle tick's, or the NOHZ kick: a tick or two).  Under
 * preferred the same, but memory stays home (the process has a policy of
 * its own, which NUMA balancing leaves alone).
 */
static void
run_linux(burst_sim *sim, int tick)
{
	const ns_plan *plan = sim->plan;
	int			nn = sim->nn;
	bool		balance = sim->opt->balance_every > 0 && tick % sim->opt->balance_every == 0;

	for (int n = 0; n < nn; n++)
	{
		int			cpus = plan->node_ncpus[n];
		int			run = sim->count[n] < cpus ? sim->count[n] : cpus;

		for (int k = 0; k < run; k++)
		{
			burst_task *t = runnable_task(sim, n, k, tick);

			run_task(sim, t, t->node);
			t->away = t->node == t->mem ? 0 : t->away + 1;
			/* NUMA balancing brings the memory of a task that stays away */
			if (t->away >= 1000 && sim->policy == BURST_LINUX)
				t->mem = t->node;
		}
		sim->node_idle[n] = cpus - run;
		sim->node_waiting[n] = sim->count[n] - run;
	}
	{
		int			idle_now[NS_MAX_NODES];

		for (int n = 0; n < nn; n++)
		{
			int			went_idle = sim->node_idle[n] - sim->node_idle_before[n];

			idle_now[n] = balance ? sim->node_idle[n] : went_idle > 0 ? went_idle : 0;
			sim->node_idle_before[n] = sim->node_idle[n];
		}
		for (int n = 0; n < nn; n++)
		{
			int			waiting = sim->node_waiting[n];

			for (int k = 0; k < plan->node_nsteal[n] && waiting > 0; k++)
			{
				int			to = plan->steal[n * nn + k];

				if (!ns_within_reach(plan, sim->settings, n, to))
					break;
				while (idle_now[to] > 0 && waiting > 0)
				{
					/* a waiting one: past the first "run" of the rotation */
					burst_task *t = runnable_task(sim, n, plan->node_ncpus[n] + waiting - 1, tick);

					t->node = to;
					idle_now[to]--;
					waiting--;
					sim->result->cross_node++;
				}
			}
		}
	}
}

/*
 * Bound to groups: each group's own CPUs first; under numasched where the
 * groups of a node share its CPUs, the idle ones of the node; then a
 * borrower's overflow on its lender's idle CPUs.
 */
static void
run_groups(burst_sim *sim, int tick)
{
	const ns_plan *plan = sim->plan;
	bool		numasched = sim->policy == BURST_STRICT;

	for (int g = 0; g < plan->ngroups; g++)
		sim->group_idle[g] = plan->groups[g].ncpus;
	for (int g = 0; g < plan->ngroups; g++)
	{
		int			run = sim->count[g] < plan->groups[g].ncpus ? sim->count[g] : plan->groups[g].ncpus;

		for (int k = 0; k < run; k++)
			run_task(sim, runnable_task(sim, g, k, tick), plan->groups[g].node);
		sim->group_idle[g] -= run;
		sim->group_ran[g] = run;
	}
	if (numasched && plan->groups_share_node)
		for (int g = 0; g < plan->ngroups; g++)
		{
			int			node = plan->groups[g].node;

			for (int i = 0; i < plan->node_ngroups[node] && sim->group_ran[g] < sim->count[g]; i++)
			{
				int			other = plan->node_first_group[node] + i;

				while (sim->group_idle[other] > 0 && sim->group_ran[g] < sim->count[g])
				{
					run_task(sim, runnable_task(sim, g, sim->group_ran[g], tick), node);
					sim->group_idle[other]--;
					sim->group_ran[g]++;
				}
			}
		}
	for (int g = 0; g < plan->ngroups; g++)
	{
		int			lender = numasched ? sim->lending.lender[g] : -1;
		int			run = sim->group_ran[g];
		int			over = sim->count[g] - run;
		int			visiting = 0;

		if (lender >= 0 && over > 0 && sim->group_idle[lender] > 0)
		{
			visiting = over < sim->group_idle[lender] ? over : sim->group_idle[lender];
			for (int k = run; k < run + visiting; k++)
				run_task(sim, runnable_task(sim, g, k, tick), plan->groups[lender].node);
			sim->group_idle[lender] -= visiting;
		}
		sim->node_waiting[plan->groups[g].node] += over - visiting;
		sim->waited_us[g] += (uint64_t) (over - visiting) * 1000;
	}
	for (int g = 0; g < plan->ngroups; g++)
	{
		sim->node_idle[plan->groups[g].node] += sim->group_idle[g];
		sim->idle_us[g] += (uint64_t) sim->group_idle[g] * 1000;
	}
}

/*
 * numasched's look under preferred (homing.c, ns_choose_homecomings): a
 * task running away from its memory's node while a CPU there was idle
 * through the whole look goes back to it, one per such CPU; two running
 * each on the other's node trade places (the extension also moves longer
 * rings round; the model, without a CPU per task, does not).
 */
static void
home_tick(burst_sim *sim)
{
	for (int i = 0; i < sim->ntasks; i++)
	{
		burst_task *t = &sim->tasks[i];

		if (t->left <= 0 || t->node == t->mem)
			continue;
		if (sim->node_idle_least[t->mem] > 0)
		{
			sim->node_idle_least[t->mem]--;
			t->node = t->mem;
			sim->result->homecomings++;
			continue;
		}
		for (int j = 0; j < sim->ntasks; j++)
		{
			burst_task *u = &sim->tasks[j];

			if (u->left > 0 && u->node == t->mem && u->mem == t->node)
			{
				u->node = u->mem;
				t->node = t->mem;
				sim->result->homecomings += 2;
				break;
			}
		}
	}
	for (int n = 0; n < sim->nn; n++)
		sim->node_idle_least[n] = sim->plan->node_ncpus[n];
}

/* numasched's lending tick: the core's decision from the idle and waiting since the last. */
static void
lend_tick(burst_sim *sim)
{
	const ns_plan *plan = sim->plan;
	ns_lend_sample sample = {sim->idle_us, sim->waited_us};
	int			n = ns_lend_tick(plan, sim->settings, &sample, (uint64_t) sim->opt->lend_every * 1000,
								 &sim->lending, sim->changed);

	for (int i = 0; i < n; i++)
	{
		int			lender = sim->lending.lender[sim->changed[i]];

		if (lender < 0)
			continue;
		sim->result->lends++;
		if (plan->groups[lender].node != plan->groups[sim->changed[i]].node)
			sim->result->cross_node++;
	}
	memset(sim->idle_us, 0, sizeof(uint64_t) * plan->ngroups);
	memset(sim->waited_us, 0, sizeof(uint64_t) * plan->ngroups);
}

/* Bursts end when their last task is done: their latency kept, their next pause drawn. */
static void
end_bursts(burst_sim *sim, int tick)
{
	for (int i = 0; i < sim->ntasks; i++)
	{
		burst_task *t = &sim->tasks[i];
		burst_session *ss = &sim->sessions[t->session];

		if (t->left != 0)
			continue;
		t->left = -1;			/* its part of the burst is done */
		if (sim->policy == BURST_STRICT)
		{
			sim->running[t->runs]--;
			if (t->runs != t->group)
				sim->away[t->group]--;
			t->runs = t->at = t->group;
		}
		if (--ss->active > 0)
			continue;
		if (sim->nlatencies == sim->latency_room)
		{
			sim->latency_room *= 2;
			sim->latencies = realloc(sim->latencies, sizeof(double) * sim->latency_room);
			if (!sim->latencies)
				plan_fail("out of memory");
		}
		sim->latencies[sim->nlatencies++] = tick + 1 - ss->started;
		ss->pause = exponential(&sim->rng, sim->pause_mean);
	}
}

static void
burst_sim_finish(burst_sim *sim)
{
	double		latency_sum = 0;

	if (sim->nlatencies > 0)
	{
		qsort(sim->latencies, sim->nlatencies, sizeof(double), compare_double);
		sim->result->latency_p99 = sim->latencies[(long) (0.99 * (sim->nlatencies - 1))];
		for (long i = 0; i < sim->nlatencies; i++)
			latency_sum += sim->latencies[i];
		sim->result->latency_mean = latency_sum / sim->nlatencies;
	}
	free(sim->tasks);
	free(sim->sessions);
	free(sim->runnable);
	free(sim->count);
	free(sim->first);
	free(sim->group_idle);
	free(sim->group_ran);
	free(sim->node_idle);
	free(sim->node_idle_before);
	free(sim->node_idle_least);
	free(sim->node_waiting);
	free(sim->idle_us);
	free(sim->waited_us);
	free(sim->changed);
	free(sim->running);
	free(sim->away);
	free(sim->latencies);
	if (sim->policy == BURST_STRICT)
		ns_lending_free(&sim->lending);
}

void
sim_bursts(const ns_plan *plan, const ns_settings *settings, const burst_options *opt,
		   burst_policy policy, burst_result *result)
{
	burst_sim	sim = {plan, settings, opt, policy, result, plan->topo->nnodes};

	memset(result, 0, sizeof(*result));
	burst_sim_start(&sim);
	for (int tick = 0; tick < opt->ticks; tick++)
	{
		begin_bursts(&sim, tick);
		sort_runnable(&sim, by_node(&sim) ? sim.nn : plan->ngroups);
		memset(sim.node_idle, 0, sizeof(int) * sim.nn);
		memset(sim.node_waiting, 0, sizeof(int) * sim.nn);
		if (by_node(&sim))
		{
			run_linux(&sim, tick);
			for (int n = 0; policy == BURST_PREFERRED && n < sim.nn; n++)
				if (sim.node_idle[n] < sim.node_idle_least[n])
					sim.node_idle_least[n] = sim.node_idle[n];
			if (policy == BURST_PREFERRED && (tick + 1) % opt->home_every == 0)
				home_tick(&sim);
		}
		else
		{
			run_groups(&sim, tick);
			if (policy == BURST_STRICT && (tick + 1) % opt->lend_every == 0)
				lend_tick(&sim);
		}
		/* what waited while a CPU in reach idled */
		for (int n = 0; n < sim.nn; n++)
		{
			result->waited += sim.node_waiting[n];
			if (sim.node_waiting[n] > 0)
				result->lost += take_idle(plan, settings, sim.node_idle, n, sim.node_waiting[n]);
		}
		end_bursts(&sim, tick);
	}
	burst_sim_finish(&sim);
}
