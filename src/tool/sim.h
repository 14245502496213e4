/*
 * sim.h - numasched-plan simulate's trace and replay: the types they share
 * (sim_trace.c makes or reads a trace, sim_replay.c replays it through a
 * policy)
 */
#ifndef SIM_H
#define SIM_H

#include "tool/plan.h"

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

/* splitmix64 numbers below n: small, seedable, the same on every platform */
int			sim_random_below(uint64_t *state, int n);

/* A seeded synthetic trace, or one read from a file (--trace). */
void		sim_make_trace(const sim_options *opt, sim_trace *trace);
void		sim_read_trace(const char *path, const sim_options *opt, sim_trace *trace);

/* qsort order of queries: by start, then session */
int			sim_compare_query_start(const void *a, const void *b);

/* Replays a trace through one policy. */
void		sim_replay(const ns_plan *plan, const ns_settings *settings, const sim_options *opt,
					   const sim_trace *trace, sim_policy policy, sim_result *result);

#endif							/* SIM_H */
