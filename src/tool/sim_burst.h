/*
 * sim_burst.h - numasched-plan bursts: a model of sessions that alternate
 * CPU bursts and pauses, one tick a millisecond (sim_burst.c), to count the
 * work that waits for a CPU while a CPU in reach is idle
 */
#ifndef SIM_BURST_H
#define SIM_BURST_H

#include "tool/plan.h"

typedef struct burst_options
{
	uint64_t	seed;
	int			ticks;			/* of 1 ms */
	int			sessions;		/* -1: two per CPU */
	int			burst_ms;		/* mean CPU of a burst */
	int			utilisation;	/* percent of the CPUs the bursts ask for */
	int			workers;		/* of a parallel burst, beside its leader */
	int			parallel_rate;	/* per mille of bursts that are parallel */
	int			lend_every;		/* numasched's lending tick, ticks */
	int			balance_every;	/* linux-like: an idle CPU's balance between nodes, ticks */
	int			home_every;		/* preferred: numasched's look for processes away, ticks */
} burst_options;

typedef enum burst_policy
{
	BURST_PREFERRED,			/* the kernel's balancing in reach, memory at home, brought home */
	BURST_STRICT,				/* bound to groups, idle CPUs lent (ns_lend.c) */
	BURST_LINUX,				/* work conserving in a node, between nodes at a balance */
	BURST_HARD,					/* bound to groups, nothing lent */
	NBURST_POLICIES
} burst_policy;

typedef struct burst_result
{
	double		demand;			/* CPU-ms the bursts asked for and got */
	double		waited;			/* task-ms runnable without a CPU */
	double		lost;			/* of those, while a CPU in reach was idle */
	double		local;			/* CPU-ms run on the node of the task's memory */
	long		cross_node;		/* tasks moved (linux, preferred) or lent CPUs (strict) to another node */
	long		homecomings;	/* preferred: tasks brought home to an idle CPU */
	long		lends;
	long		visits;			/* numasched: bursts that started on a lent CPU */
	double		latency_p99;	/* of a burst, from start to end, ms */
	double		latency_mean;	/* of a burst, ms */
} burst_result;

void		sim_bursts(const ns_plan *plan, const ns_settings *settings, const burst_options *opt,
					   burst_policy policy, burst_result *result);

#endif							/* SIM_BURST_H */
