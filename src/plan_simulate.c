/*
 * plan_simulate.c - numasched-plan simulate
 *
 * A seeded synthetic trace (sessions arriving and leaving, some idle and
 * some busy; parallel queries with W workers) is generated once and then
 * replayed through numasched's placement and rebalance and through three
 * baselines that know nothing of NUMA: a random node, round-robin over
 * groups, and first-fit.
 *
 * Whether a node "has room" is judged twice: on the load the policy could
 * know (what numasched's shared state holds: one CPU per new process until
 * the scheduler has measured it, measured loads after each pass), which
 * tests the placement rules themselves; and on the true load of the trace,
 * which also shows what measuring only every few ticks costs.
 *
 * What a NUMA machine charges for is memory accessed from another node, for
 * the life of a process, so the headline is memory-access locality over
 * time.  The model (one tick stands for about 100 ms):
 * - a process allocates, every tick it lives, as much as it runs (one unit
 *   per CPU busy, 0.05 for an idle session) on the node it runs on at the
 *   time: first touch, the kernel's local policy and numasched's
 *   memory_policy = local or preferred;
 * - its accesses in a tick are as many as it runs; a parallel worker's go
 *   half to its own memory and half to its leader's (the shared state of the
 *   query: the DSM segment and the leader's buffers it reads);
 * - a process moved to another node takes its memory along with
 *   numasched.migrate_memory (on, as in the extension: move_pages), else
 *   leaves it where it is;
 * - locality = the share of accesses, summed over processes and ticks, that
 *   find their memory on the node the process runs on.
 * The "linux" baseline is what a DBA has without numasched: a process starts
 * in the least loaded group (fork balancing looks for the idlest CPU, NUMA
 * or not), the load balancer moves tasks between groups on any node by the
 * same imbalance threshold as numasched's (nearest domains first, as the
 * scheduling domains do), and pages follow slowly, as automatic NUMA
 * balancing migrates them on the next fault after a scan: every
 * AUTONUMA_PERIOD ticks (numa_balancing_scan_period_min_ms, 1 s) a process's
 * remote memory moves AUTONUMA_SHARE of the way to its node (a scan covers
 * numa_balancing_scan_size_mb, 256 MB, about a quarter of a busy backend's
 * memory).  The task-to-memory half of NUMA balancing is not modelled.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct sim_session
{
	int			arrive;
	int			leave;
	uint32_t	weight;
} sim_session;

typedef struct sim_query
{
	int			session;
	int			start;
	int			end;
} sim_query;

typedef struct sim_trace
{
	int			nsessions;
	sim_session *sessions;
	int			nqueries;
	sim_query  *queries;		/* sorted by start */
} sim_trace;

typedef struct sim_options
{
	uint64_t	seed;
	int			ticks;
	int			sessions;		/* mean concurrent sessions */
	int			lifetime;		/* mean session lifetime, ticks */
	int			workers;
	int			parallel_rate;	/* per mille per session and tick */
	int			rebalance_every;
	bool		migrate_memory;
} sim_options;

#define IDLE_TOUCH 0.05
#define WORKER_LEADER_SHARE 0.5
#define AUTONUMA_PERIOD 10
#define AUTONUMA_SHARE 0.25

typedef enum sim_policy
{
	POLICY_NUMASCHED,
	POLICY_LINUX,
	POLICY_RANDOM_NODE,
	POLICY_ROUND_ROBIN,
	POLICY_FIRST_FIT,
	NPOLICIES
} sim_policy;

static const char *const policy_names[NPOLICIES] = {
	"numasched", "linux", "random-node", "round-robin", "first-fit"
};

/* Worker placements judged against one view of the load. */
typedef struct sim_judged
{
	long		leader_node_had_room;
	long		on_leader_node_with_room;
	long		spills;			/* workers off the leader's node while some node had room */
	long		spills_nearest;
	long		overflows;		/* off the leader's node, no node in reach had room */
} sim_judged;

typedef struct sim_result
{
	long		workers;
	long		on_leader_node;
	sim_judged	seen;			/* on the load the policy could know */
	sim_judged	truth;			/* on the trace's true load */
	double		imbalance_sum;
	long		imbalance_samples;
	long		moves;
	long		moves_by_hops[3];	/* same node, 1 hop, farther */
	double		local_accesses;
	double		accesses;
	double		waiting;		/* CPU demand above the CPUs of its group */
	double		demand;
} sim_result;

/* splitmix64: small, seedable, and the same on every platform */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int
random_below(uint64_t *state, int n)
{
	return (int) (next_random(state) % (uint64_t) n);
}

/* exponential-ish lifetime with the given mean, at least one tick */
static int
random_lifetime(uint64_t *state, int mean)
{
	return 1 + random_below(state, 2 * mean);
}

static void
make_trace(const sim_options *opt, sim_trace *trace)
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
			if (random_below(&rng, 1000) < per_mille % 1000)
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
			s->weight = random_below(&rng, 100) < 60 ? NS_CPU_LOAD : NS_CPU_LOAD / 20;
		}
	}
	/* parallel queries: a session runs at most one at a time */
	for (int i = 0; i < trace->nsessions; i++)
	{
		sim_session *s = &trace->sessions[i];
		int			end = opt->ticks < s->leave ? opt->ticks : s->leave;

		for (int t = s->arrive + 1; t < end; t++)
		{
			if (random_below(&rng, 1000) >= opt->parallel_rate)
				continue;
			if (trace->nqueries == qcap)
			{
				qcap *= 2;
				trace->queries = realloc(trace->queries, qcap * sizeof(sim_query));
			}
			trace->queries[trace->nqueries].session = i;
			trace->queries[trace->nqueries].start = t;
			t += 5 + random_below(&rng, 36);
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
static void
read_trace(const char *path, const sim_options *opt, sim_trace *trace)
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

static int
compare_query_start(const void *a, const void *b)
{
	const sim_query *x = a,
			   *y = b;

	if (x->start != y->start)
		return x->start - y->start;
	return x->session - y->session;
}

/* One live process of the replay. */
typedef struct sim_proc
{
	bool		alive;
	int			group;
	uint32_t	weight;			/* true weight */
	uint32_t	counted;		/* what the policy's bookkeeping counts */
	uint32_t	moved_pass;
	int			keep_node;
	int			leader;			/* a worker's leader (proc index), or -1 */
	float	   *memory;			/* units per node index */
} sim_proc;

typedef struct sim_state
{
	const ns_plan *plan;
	const ns_settings *settings;
	sim_policy	policy;
	ns_loads	counted;		/* the policy's view */
	ns_loads	truth;			/* the trace's weights */
	sim_proc   *procs;
	float	   *memory;			/* nnodes per proc */
	bool		migrate_memory;
	int			nprocs;
	uint64_t	rng;
	int			round_robin;
	sim_result *result;
} sim_state;

static int
baseline_place(sim_state *st)
{
	const ns_plan *plan = st->plan;

	switch (st->policy)
	{
		case POLICY_RANDOM_NODE:
			{
				int			node;

				do
					node = random_below(&st->rng, plan->topo->nnodes);
				while (plan->node_ngroups[node] == 0);
				return plan->node_first_group[node] + random_below(&st->rng, plan->node_ngroups[node]);
			}
		case POLICY_ROUND_ROBIN:
			return st->round_robin++ % plan->ngroups;
		case POLICY_LINUX:
			{
				/* fork balancing: the idlest group, by what really runs */
				int			best = 0;

				for (int g = 1; g < plan->ngroups; g++)
					if ((uint64_t) st->truth.group[g] * plan->groups[best].ncpus <
						(uint64_t) st->truth.group[best] * plan->groups[g].ncpus)
						best = g;
				return best;
			}
		case POLICY_FIRST_FIT:
			{
				int			best = 0;

				for (int g = 0; g < plan->ngroups; g++)
				{
					if (ns_group_has_room(plan, &st->counted, g))
						return g;
					if ((uint64_t) st->counted.group[g] * plan->groups[best].ncpus <
						(uint64_t) st->counted.group[best] * plan->groups[g].ncpus)
						best = g;
				}
				return best;
			}
		default:
			return 0;
	}
}

static int
add_proc(sim_state *st, int group, uint32_t weight, int keep_node, int leader)
{
	int			i = st->nprocs++;

	st->procs[i].leader = leader;
	st->procs[i].memory = st->memory + (size_t) i * st->plan->topo->nnodes;
	st->procs[i].alive = true;
	st->procs[i].group = group;
	st->procs[i].weight = weight;
	st->procs[i].counted = NS_DEFAULT_WEIGHT;
	st->procs[i].moved_pass = 0;
	st->procs[i].keep_node = keep_node;
	ns_loads_add(st->plan, &st->counted, group, NS_DEFAULT_WEIGHT);
	ns_loads_add(st->plan, &st->truth, group, weight);
	return i;
}

static void
remove_proc(sim_state *st, int i)
{
	sim_proc   *p = &st->procs[i];

	if (!p->alive)
		return;
	p->alive = false;
	ns_loads_add(st->plan, &st->counted, p->group, -(int64_t) p->counted);
	ns_loads_add(st->plan, &st->truth, p->group, -(int64_t) p->weight);
}

static int
place_backend(sim_state *st, uint32_t weight)
{
	int			group;

	if (st->policy == POLICY_NUMASCHED)
	{
		ns_request	req = {false, -1, -1, -1, 0, NULL, NULL};
		ns_placement where;

		ns_place(st->plan, &st->counted, st->settings, &req, &where);
		group = where.group;
	}
	else
		group = baseline_place(st);
	return add_proc(st, group, weight, -1, -1);
}

/* Judges one worker placement against the loads in "view". */
static void
judge(const sim_state *st, const ns_loads *view, int leader_node, int node, sim_judged *j)
{
	const ns_plan *plan = st->plan;
	const ns_topology *topo = plan->topo;
	int			nearest_room = -1;

	for (int n = 0; n < topo->nnodes; n++)
	{
		if (plan->node_ngroups[n] == 0 || view->node_room[n] == 0)
			continue;
		if (st->settings->max_steal_distance &&
			ns_distance(topo, leader_node, n) > st->settings->max_steal_distance)
			continue;
		if (nearest_room < 0 ||
			ns_distance(topo, leader_node, n) < ns_distance(topo, leader_node, nearest_room))
			nearest_room = n;
	}
	if (view->node_room[leader_node] > 0)
	{
		j->leader_node_had_room++;
		if (node == leader_node)
			j->on_leader_node_with_room++;
	}
	if (node != leader_node)
	{
		if (nearest_room < 0)
			j->overflows++;
		else
		{
			j->spills++;
			if (ns_distance(topo, leader_node, node) == ns_distance(topo, leader_node, nearest_room))
				j->spills_nearest++;
		}
	}
}

static int
place_worker(sim_state *st, int leader, int number)
{
	const ns_plan *plan = st->plan;
	int			leader_group = st->procs[leader].group;
	int			leader_node = plan->groups[leader_group].node;
	int			group;
	int			node;

	if (st->policy == POLICY_NUMASCHED)
	{
		ns_request	req = {true, -1, -1, leader_group, number, NULL, NULL};
		ns_placement where;

		ns_place(plan, &st->counted, st->settings, &req, &where);
		group = where.group;
	}
	else
		group = baseline_place(st);
	node = plan->groups[group].node;

	st->result->workers++;
	if (node == leader_node)
		st->result->on_leader_node++;
	judge(st, &st->counted, leader_node, node, &st->result->seen);
	judge(st, &st->truth, leader_node, node, &st->result->truth);
	return add_proc(st, group, NS_CPU_LOAD,
					st->policy == POLICY_NUMASCHED &&
					st->settings->parallel == NS_PARALLEL_COMPACT ? leader_node : -1, leader);
}

/*
 * A moved process: numasched with migrate_memory takes its memory along to
 * its new node; anything else leaves it (the kernel's pages follow later,
 * see autonuma()).
 */
static void
move_memory(sim_state *st, sim_proc *p, int to_node)
{
	int			nn = st->plan->topo->nnodes;
	float		total = 0;

	if (st->policy != POLICY_NUMASCHED || !st->migrate_memory)
		return;
	for (int n = 0; n < nn; n++)
	{
		total += p->memory[n];
		p->memory[n] = 0;
	}
	p->memory[to_node] = total;
}

/*
 * The scheduler's pass: the bookkeeping learns the measured loads (for every
 * policy, so that all are judged alike), then numasched rebalances.
 */
static void
measure_and_rebalance(sim_state *st, uint32_t pass)
{
	const ns_plan *plan = st->plan;
	ns_proc    *procs = malloc((st->nprocs + 1) * sizeof(ns_proc));
	int		   *index = malloc((st->nprocs + 1) * sizeof(int));
	ns_move		moves[64];
	int			n = 0;
	int			nmoves;

	ns_loads_reset(plan, &st->counted);
	for (int i = 0; i < st->nprocs; i++)
	{
		sim_proc   *p = &st->procs[i];

		if (!p->alive)
			continue;
		p->counted = p->weight;
		ns_loads_add(plan, &st->counted, p->group, p->weight);
		procs[n].group = p->group;
		procs[n].weight = p->weight;
		procs[n].moved_pass = p->moved_pass;
		procs[n].keep_node = p->keep_node;
		procs[n].allowed = NULL;
		index[n++] = i;
	}
	if (st->policy == POLICY_NUMASCHED)
		nmoves = ns_rebalance(plan, st->settings, procs, n, pass, moves, 64);
	else if (st->policy == POLICY_LINUX)
	{
		/* the kernel's balancer: by load alone, NUMA or not */
		ns_settings linux_balancer = *st->settings;

		linux_balancer.cross_node_only_when_waiting = false;
		linux_balancer.max_steal_distance = 0;
		nmoves = ns_rebalance(plan, &linux_balancer, procs, n, pass, moves, 64);
	}
	else
		nmoves = 0;
	for (int m = 0; m < nmoves; m++)
	{
		sim_proc   *p = &st->procs[index[moves[m].proc]];

		ns_loads_add(plan, &st->counted, p->group, -(int64_t) p->counted);
		ns_loads_add(plan, &st->truth, p->group, -(int64_t) p->weight);
		move_memory(st, p, plan->groups[moves[m].to_group].node);
		p->group = moves[m].to_group;
		p->moved_pass = pass;
		ns_loads_add(plan, &st->counted, p->group, p->counted);
		ns_loads_add(plan, &st->truth, p->group, p->weight);
		st->result->moves++;
		st->result->moves_by_hops[moves[m].hops < 2 ? moves[m].hops : 2]++;
	}
	free(procs);
	free(index);
}

/* Every AUTONUMA_PERIOD ticks, the linux baseline's pages follow their task. */
static void
autonuma(sim_state *st)
{
	int			nn = st->plan->topo->nnodes;

	for (int i = 0; i < st->nprocs; i++)
	{
		sim_proc   *p = &st->procs[i];
		int			here = st->plan->groups[p->group].node;

		if (!p->alive)
			continue;
		for (int n = 0; n < nn; n++)
		{
			float		moved = n == here ? 0 : p->memory[n] * (float) AUTONUMA_SHARE;

			p->memory[n] -= moved;
			p->memory[here] += moved;
		}
	}
}

/* Share of a process's memory on "node" (1 with none yet: nothing remote). */
static double
share_on(const sim_proc *p, int node, int nn)
{
	double		total = 0;

	for (int n = 0; n < nn; n++)
		total += p->memory[n];
	return total > 0 ? p->memory[node] / total : 1.0;
}

/*
 * One tick of memory: every live process touches memory where it runs, and
 * its accesses are counted local or remote.
 */
static void
touch_memory(sim_state *st)
{
	const ns_plan *plan = st->plan;
	int			nn = plan->topo->nnodes;

	for (int i = 0; i < st->nprocs; i++)
	{
		sim_proc   *p = &st->procs[i];
		int			node;
		double		runs,
					local;

		if (!p->alive)
			continue;
		node = plan->groups[p->group].node;
		runs = p->weight >= NS_CPU_LOAD ? 1.0 : IDLE_TOUCH;
		p->memory[node] += (float) runs;
		local = share_on(p, node, nn);
		if (p->leader >= 0)
			local = (1 - WORKER_LEADER_SHARE) * local +
				WORKER_LEADER_SHARE * share_on(&st->procs[p->leader], node, nn);
		st->result->local_accesses += runs * local;
		st->result->accesses += runs;
	}
}

static void
sample_imbalance(sim_state *st)
{
	const ns_plan *plan = st->plan;
	double		lo = 0,
				hi = 0;

	for (int g = 0; g < plan->ngroups; g++)
	{
		double		per_cpu = (double) st->truth.group[g] / NS_CPU_LOAD / plan->groups[g].ncpus;

		if (g == 0 || per_cpu < lo)
			lo = per_cpu;
		if (g == 0 || per_cpu > hi)
			hi = per_cpu;
	}
	st->result->imbalance_sum += hi - lo;
	for (int g = 0; g < plan->ngroups; g++)
	{
		double		load = (double) st->truth.group[g] / NS_CPU_LOAD;

		st->result->demand += load;
		if (load > plan->groups[g].ncpus)
			st->result->waiting += load - plan->groups[g].ncpus;
	}
	st->result->imbalance_samples++;
}

static void
replay(const ns_plan *plan, const ns_settings *settings, const sim_options *opt,
	   const sim_trace *trace, sim_policy policy, sim_result *result)
{
	sim_state	st;
	int		   *session_proc = malloc(trace->nsessions * sizeof(int));
	int		   *query_first = malloc((trace->nqueries + 1) * sizeof(int));
	long		max_procs = trace->nsessions + (long) trace->nqueries * opt->workers + 1;
	int			next_session = 0,
				next_query = 0;
	uint32_t	pass = 0;

	memset(result, 0, sizeof(*result));
	memset(&st, 0, sizeof(st));
	st.plan = plan;
	st.settings = settings;
	st.policy = policy;
	st.rng = opt->seed ^ UINT64_C(0x5DEECE66D);
	st.result = result;
	st.procs = malloc(max_procs * sizeof(sim_proc));
	st.memory = calloc((size_t) max_procs * plan->topo->nnodes, sizeof(float));
	st.migrate_memory = opt->migrate_memory;
	if (!session_proc || !query_first || !st.procs || !st.memory ||
		!ns_loads_alloc(plan, &st.counted) || !ns_loads_alloc(plan, &st.truth))
		plan_fail("out of memory in the simulation");

	for (int t = 0; t < opt->ticks; t++)
	{
		/* departures first: what leaves makes room for what arrives */
		for (int q = 0; q < next_query; q++)
		{
			const sim_query *query = &trace->queries[q];

			if (query->end == t || (query->end > t && trace->sessions[query->session].leave == t))
				for (int w = 0; w < opt->workers; w++)
					remove_proc(&st, query_first[q] + w);
		}
		for (int s = 0; s < next_session; s++)
			if (trace->sessions[s].leave == t)
				remove_proc(&st, session_proc[s]);

		while (next_session < trace->nsessions && trace->sessions[next_session].arrive == t)
		{
			session_proc[next_session] = place_backend(&st, trace->sessions[next_session].weight);
			next_session++;
		}
		while (next_query < trace->nqueries && trace->queries[next_query].start == t)
		{
			const sim_query *query = &trace->queries[next_query];

			query_first[next_query] = st.nprocs;
			for (int w = 0; w < opt->workers; w++)
				place_worker(&st, session_proc[query->session], w);
			next_query++;
		}
		if (opt->rebalance_every > 0 &&
			t % opt->rebalance_every == opt->rebalance_every - 1)
			measure_and_rebalance(&st, ++pass);
		if (policy == POLICY_LINUX && t % AUTONUMA_PERIOD == AUTONUMA_PERIOD - 1)
			autonuma(&st);
		touch_memory(&st);
		sample_imbalance(&st);
	}
	ns_loads_free(&st.counted);
	ns_loads_free(&st.truth);
	free(st.procs);
	free(st.memory);
	free(session_proc);
	free(query_first);
}

static void
print_judged_json(const char *name, const sim_judged *j)
{
	printf("\"%s\":{\"leader_node_had_room\":%ld,\"on_leader_node_with_room\":%ld,"
		   "\"spills\":%ld,\"spills_nearest\":%ld,\"overflows\":%ld},",
		   name, j->leader_node_had_room, j->on_leader_node_with_room,
		   j->spills, j->spills_nearest, j->overflows);
}

static double
percent(long part, long whole)
{
	return whole > 0 ? 100.0 * part / whole : 100.0;
}

int
plan_simulate_main(int argc, char **argv)
{
	static const struct option options[] = {
		PLAN_COMMON_LONG_OPTIONS,
		{"seed", required_argument, NULL, 's'},
		{"ticks", required_argument, NULL, 't'},
		{"sessions", required_argument, NULL, 'n'},
		{"workers", required_argument, NULL, 'w'},
		{"parallel-rate", required_argument, NULL, 'p'},
		{"rebalance-every", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"no-migrate-memory", no_argument, NULL, 'M'},
		{"imbalance-threshold", required_argument, NULL, 'i'},
		{"cross-node-moves", required_argument, NULL, 'x'},
		{"trace", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0}
	};
	plan_env	env = {0};
	sim_options opt = {1, 2000, -1, 300, 4, 10, 10, true};
	bool		json = false;
	const char *trace_file = NULL;
	sim_trace	trace;
	sim_result	results[NPOLICIES];
	int			o;

	ns_settings_default(&env.settings);
	while ((o = plan_getopt(argc, argv, options)) != -1)
	{
		switch (o)
		{
			case 's':
				opt.seed = plan_u64_option("--seed", optarg);
				break;
			case 't':
				opt.ticks = plan_int_option("--ticks", optarg, 1, 1000000);
				break;
			case 'n':
				opt.sessions = plan_int_option("--sessions", optarg, 1, 100000);
				break;
			case 'w':
				opt.workers = plan_int_option("--workers", optarg, 0, 64);
				break;
			case 'p':
				opt.parallel_rate = plan_int_option("--parallel-rate", optarg, 0, 1000);
				break;
			case 'r':
				opt.rebalance_every = plan_int_option("--rebalance-every", optarg, 0, 1000000);
				break;
			case 'j':
				json = true;
				break;
			case 'M':
				opt.migrate_memory = false;
				break;
			case 'T':
				trace_file = optarg;
				break;
			case 'i':
				env.settings.imbalance_threshold = plan_int_option("--imbalance-threshold", optarg, 1, 1000);
				break;
			case 'x':
				if (strcmp(optarg, "when-waiting") == 0)
					env.settings.cross_node_only_when_waiting = true;
				else if (strcmp(optarg, "by-imbalance") == 0)
					env.settings.cross_node_only_when_waiting = false;
				else
					plan_fail("--cross-node-moves must be when-waiting or by-imbalance, not \"%s\"", optarg);
				break;
			default:
				if (!plan_common_option(&env, o, optarg))
					plan_fail("unrecognized option \"%s\" (see numasched-plan --help)", argv[optind - 1]);
		}
	}
	plan_no_more_arguments(optind, argc, argv);
	plan_env_load(&env);
	/*
	 * By default about three quarters of the CPUs are busy on average: half
	 * as many sessions as CPUs, 60% of them busy, and their parallel queries.
	 */
	if (opt.sessions < 0)
		opt.sessions = (ns_cpuset_count(&env.topo->usable) + 1) / 2;

	if (trace_file)
		read_trace(trace_file, &opt, &trace);
	else
		make_trace(&opt, &trace);
	qsort(trace.queries, trace.nqueries, sizeof(sim_query), compare_query_start);
	for (int p = 0; p < NPOLICIES; p++)
		replay(env.plan, &env.settings, &opt, &trace, p, &results[p]);

	if (json)
	{
		printf("{\"seed\":%llu,\"ticks\":%d,\"sessions\":%d,\"parallel_queries\":%d,"
			   "\"workers\":%d,\"groups\":%d,\"policies\":[",
			   (unsigned long long) opt.seed, opt.ticks, trace.nsessions, trace.nqueries,
			   opt.workers, env.plan->ngroups);
		for (int p = 0; p < NPOLICIES; p++)
		{
			sim_result *r = &results[p];

			printf("%s{\"policy\":\"%s\",\"locality_percent\":%.3f,\"workers\":%ld,\"on_leader_node\":%ld,",
				   p ? "," : "", policy_names[p], 100.0 * r->local_accesses / (r->accesses > 0 ? r->accesses : 1),
				   r->workers, r->on_leader_node);
			print_judged_json("seen", &r->seen);
			print_judged_json("truth", &r->truth);
			printf("\"imbalance\":%.4f,\"moves\":%ld,\"moves_same_node\":%ld,"
				   "\"moves_1_hop\":%ld,\"moves_farther\":%ld,\"moves_cross_node\":%ld,"
				   "\"waiting_percent\":%.3f}",
				   r->imbalance_samples ? r->imbalance_sum / r->imbalance_samples : 0.0,
				   r->moves, r->moves_by_hops[0], r->moves_by_hops[1], r->moves_by_hops[2],
				   r->moves_by_hops[1] + r->moves_by_hops[2],
				   100.0 * r->waiting / (r->demand > 0 ? r->demand : 1));
		}
		printf("]}\n");
	}
	else
	{
		printf("trace: seed %llu, %d ticks, %d sessions, %d parallel queries x %d workers, "
			   "%d groups on %d nodes, a scheduler pass every %d ticks\n",
			   (unsigned long long) opt.seed, opt.ticks, trace.nsessions, trace.nqueries,
			   opt.workers, env.plan->ngroups, env.topo->nnodes, opt.rebalance_every);
		printf("%-12s %9s %13s %17s %7s %17s %9s %6s %6s\n",
			   "", "memory", "workers on", "on leader's node", "", "spills to nearest", "imbalance", "", "cross-");
		printf("%-12s %9s %13s %17s %7s %17s %9s %6s %6s\n",
			   "policy", "locality", "leader's node", "when it had room", "spills", "node with room", "per CPU",
			   "moves", "node");
		for (int p = 0; p < NPOLICIES; p++)
		{
			sim_result *r = &results[p];
			char		local[32],
						nearest[32];

			snprintf(local, sizeof(local), "%.1f%% (%.1f%%)",
					 percent(r->seen.on_leader_node_with_room, r->seen.leader_node_had_room),
					 percent(r->truth.on_leader_node_with_room, r->truth.leader_node_had_room));
			snprintf(nearest, sizeof(nearest), "%.1f%% (%.1f%%)",
					 percent(r->seen.spills_nearest, r->seen.spills),
					 percent(r->truth.spills_nearest, r->truth.spills));
			printf("%-12s %8.1f%% %12.1f%% %17s %7ld %17s %9.3f %6ld %6ld\n", policy_names[p],
				   100.0 * r->local_accesses / (r->accesses > 0 ? r->accesses : 1),
				   percent(r->on_leader_node, r->workers), local, r->seen.spills, nearest,
				   r->imbalance_samples ? r->imbalance_sum / r->imbalance_samples : 0.0, r->moves,
				   r->moves_by_hops[1] + r->moves_by_hops[2]);
		}
		printf("Memory locality: the share of memory accesses, over processes and ticks, that find\n"
			   "their memory on the node the process runs on (see --help for the model).\n"
			   "Room is judged on the load the policy's bookkeeping knew (a new process counts\n"
			   "one CPU until the scheduler measures it); in parentheses, on the trace's true load.\n");
	}
	free(trace.sessions);
	free(trace.queries);
	plan_env_free(&env);
	return 0;
}
