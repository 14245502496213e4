/*
 * numasched_scx_background.bpf.h - the background tier's wait bound in
 * numasched_scx.bpf.c: when a CPU serves a node's background queue ahead of
 * normal work, and the time each kind ran on it since.  Included once, by
 * the scheduler, after numasched_scx_fair.bpf.h.
 */
#ifndef NUMASCHED_SCX_BACKGROUND_BPF_H
#define NUMASCHED_SCX_BACKGROUND_BPF_H

/*
 * per CPU, since it last served background work at its bound: the time
 * normal work ran, and the time that background work ran.  Background work
 * comes due again once normal work has had NORMAL_PER_DUE times as much (a
 * fifth of a busy CPU), or as much while the node's background work is past
 * its bound (half).
 */
#define NORMAL_PER_DUE 4
u64			normal_ns_since_due[MAX_CPUS];
u64			background_ns_since_due[MAX_CPUS];
/* per CPU: the background task it served at its bound has yet to stop */
bool		due_running[MAX_CPUS];
/* per node: when its background queue last had a task served, or began to wait */
u64			background_served_at[MAX_NODES];
/* Whether the oldest task in a node's background queue has waited past its bound */
static bool
background_late(u32 node, u64 now)
{
	struct bpf_iter_scx_dsq it;
	struct task_struct *first = NULL;
	struct task_ctx *tctx = NULL;

	if (!bpf_iter_scx_dsq_new(&it, BACKGROUND_DSQ + node, 0))
		first = bpf_iter_scx_dsq_next(&it);
	if (first)
		tctx = bpf_task_storage_get(&task_ctxs, first, NULL, 0);
	bpf_iter_scx_dsq_destroy(&it);
	return tctx && tctx->queued_at && now - tctx->queued_at > background_wait_ns;
}

static bool
serve_background(u32 node, u64 now, enum ns_stat stat)
{
	if (!scx_bpf_dsq_move_to_local(BACKGROUND_DSQ + node))
		return false;
	count(stat);
	background_served_at[NODE_INDEX(node)] = now;
	return true;
}

/*
 * Serves one of the "waiting" tasks of a node's background queue ahead of
 * normal work if it is due: true if so.
 *
 * The bound on background work's wait: with n waiting, one is served
 * ahead of normal work every background_wait_ns / n, so that the last of
 * them runs within background_wait_ns; but by time, a busy CPU gives
 * background work at most a fifth of itself, or half while the node's
 * oldest background task is past its bound (more of them wait than a fifth
 * leaves room for), so that a turn of them all stays short and normal work
 * keeps at least as much.  The kernel would give 300 tasks at nice 19
 * beside 4 at nice 0 about half (their weights); a fifth alone let a turn
 * of them take 16 s in an emulated guest, near RCU's stall timeout, which
 * unloads the scheduler.
 */
static bool
serve_background_due(u32 c, u32 node, u64 now, s32 waiting)
{
	u64			normal = normal_ns_since_due[c];
	u64			background = background_ns_since_due[c];

	/* the queue is walked only where the share hangs on it */
	if (now - background_served_at[NODE_INDEX(node)] <= background_wait_ns / (u64) waiting ||
		normal < background ||
		(normal < NORMAL_PER_DUE * background && !background_late(node, now)) ||
		!serve_background(node, now, STAT_BACKGROUND_DUE))
		return false;
	normal_ns_since_due[c] = 0;
	background_ns_since_due[c] = 0;
	due_running[c] = true;
	return true;
}

/*
 * Counts a run that stops on CPU c: normal work's, or background work's
 * served at its bound (work on a CPU left idle costs normal work nothing)
 */
static void
charge_run(u32 c, bool background, u64 used)
{
	if (!background)
		normal_ns_since_due[c] += used;
	else if (due_running[c])
	{
		background_ns_since_due[c] += used;
		due_running[c] = false;
	}
}

#endif							/* NUMASCHED_SCX_BACKGROUND_BPF_H */
