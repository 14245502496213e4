/*
 * sim_replay.c - a trace replayed through numasched's placement and
 * rebalance or through a baseline, with the machine's memory modelled
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
#include "tool/sim.h"

#include <stdlib.h>
#include <string.h>

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
					node = sim_random_below(&st->rng, plan->topo->nnodes);
				while (plan->node_ngroups[node] == 0);
				return plan->node_first_group[node] + sim_random_below(&st->rng, plan->node_ngroups[node]);
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
		ns_request	req = {false, -1, -1, -1, 0, NULL, NULL, -1};
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
		ns_request	req = {true, -1, -1, leader_group, number, NULL, NULL, -1};
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

void
sim_replay(const ns_plan *plan, const ns_settings *settings, const sim_options *opt,
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
