/*
 * numasched_scx_fair.bpf.h - the fair share of numasched_scx.bpf.c: each
 * task's virtual time, charged with the CPU time it used over its share of
 * the machine through the kernel's own task groups (cpu cgroups, autogroups),
 * the groups' runnable loads (numasched_scx_groups.bpf.h), each node's
 * virtual clock, a sleeper's floor there, and the slice of a queued task,
 * where a fair-tier task queues, whether a spent task goes on.  Included
 * once, by the scheduler, after its settings.
 */
#ifndef NUMASCHED_SCX_FAIR_BPF_H
#define NUMASCHED_SCX_FAIR_BPF_H

/* per task: its place in the fair share, and when it started running or was queued */
struct task_ctx
{
	u64			vtime;			/* CPU time used, divided by its share */
	u64			started_at;		/* when it last started running */
	u64			queued_at;		/* when background work was queued; 0 once it ran */
	u64			group;			/* the task group its weight counts in while runnable; 0 if none */
	s64			weight;			/* the weight it added there, in shares */
	u32			vnode;			/* the node whose virtual clock vtime counts on: its last queue's */
	bool		idle_cpu;		/* placed on an idle CPU, past every queue */
};

struct
{
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
}			task_ctxs SEC(".maps");

/*
 * Per node: the virtual time of the most advanced normal task that started
 * running there from a queue (or went on, its slice spent).  Not one for the
 * machine: a node whose CPUs run fewer tasks runs each further ahead, and a
 * sleeper woken on a busier node would wait behind every task there.  Not a
 * task placed on an idle CPU: it competed with nobody, and one of a small
 * share (nice 19, a member of a large group) would move every sleeper's
 * floor far ahead of the tasks that run, which would keep the CPU from them.
 */
u64			vtime_now[MAX_NODES];

static struct task_ctx *
task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

#include "numasched_scx_groups.bpf.h"

/* A task's virtual time with its run since started_at charged */
static u64
vtime_with_run(const struct task_ctx *tctx, u64 now)
{
	u64			used = now - tctx->started_at;

	/* a second at most: no overflow below, whatever the clock did */
	if (used > (1ULL << SHARE_SHIFT))
		used = 1ULL << SHARE_SHIFT;
	return tctx->vtime + (used << SHARE_SHIFT) / share_of(tctx);
}

/*
 * A task's virtual time on a node's clock.  Each node's clock moves at its
 * own pace (a node that runs mostly background work barely moves), so a
 * task counted on another node's carries its lag there, at most a slice
 * either way, as the kernel carries a task's lag to a runqueue it migrates
 * to.  Carried as it was, a time a minute ahead of this node's clock would
 * wait behind every task queued here: the companion's own loader, woken
 * into the other node's queue, waited 29 s and the kernel's watchdog
 * unloaded the scheduler.
 */
static u64
vtime_on(const struct task_ctx *tctx, u32 node)
{
	s64			lag;

	if (tctx->vnode == node)
		return tctx->vtime;
	lag = (s64) (tctx->vtime - vtime_now[NODE_INDEX(tctx->vnode)]);
	if (lag > (s64) slice_ns)
		lag = (s64) slice_ns;
	if (lag < -(s64) slice_ns)
		lag = -(s64) slice_ns;
	return vtime_now[NODE_INDEX(node)] + lag;
}

/*
 * The virtual time a task is queued at on a node: its own on that node's
 * clock, but no more than a slice behind the most advanced (what sleeping
 * earns is bounded)
 */
static u64
queued_vtime(struct task_ctx *tctx, u32 node)
{
	u64			now = vtime_now[NODE_INDEX(node)];
	u64			floor = now > slice_ns ? now - slice_ns : 0;

	tctx->vtime = vtime_on(tctx, node);
	tctx->vnode = node;
	if (tctx->vtime < floor)
		tctx->vtime = floor;
	return tctx->vtime;
}

/* A queued task's slice: shorter as more wait in its queue, down to a background slice */
static u64
fair_slice(u64 dsq)
{
	s32			waiting = scx_bpf_dsq_nr_queued(dsq);
	u64			slice = slice_ns / (u64) (waiting > 0 ? waiting + 1 : 1);

	return slice < background_slice_ns ? background_slice_ns : slice;
}

/*
 * A fair-tier task's queue: its previous CPU's node, unless another node it
 * may run on has two fewer tasks waiting (the kernel balances its
 * runqueues; without this, tasks that landed on one node would share its
 * CPUs while another node's run theirs alone)
 */
static u32
fair_node(const struct task_struct *p)
{
	u32			prev = node_of_cpu(scx_bpf_task_cpu(p));
	u32			best = prev;
	s32			fewest = scx_bpf_dsq_nr_queued(prev);

	for (u32 node = 0; node < MAX_NODES && node < nr_nodes; node++)
	{
		s32			waiting;

		if (node == prev)
			continue;
		waiting = scx_bpf_dsq_nr_queued(node);
		if (waiting + 1 < fewest && may_run_on_node(p, node))
		{
			best = node;
			fewest = waiting;
		}
	}
	return best;
}

/*
 * Whether a task whose slice ran out, still runnable, is behind the first
 * task of a queue in virtual time (with what it ran since it started
 * charged): the kernel would let it go on rather than alternate with a task
 * of another weight.
 */
static bool
goes_on(struct task_struct *prev, u32 node, u64 now)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, prev, NULL, 0);
	struct bpf_iter_scx_dsq it;
	struct task_struct *first = NULL;
	bool		behind = false;

	if (!bpf_iter_scx_dsq_new(&it, node, 0))
		first = bpf_iter_scx_dsq_next(&it);
	if (first && tctx && tctx->started_at)
		behind = (s64) (vtime_with_run(tctx, now) - tctx->vtime + vtime_on(tctx, node) -
						BPF_CORE_READ(first, scx.dsq_vtime)) < 0;
	bpf_iter_scx_dsq_destroy(&it);
	return behind;
}

#endif							/* NUMASCHED_SCX_FAIR_BPF_H */
