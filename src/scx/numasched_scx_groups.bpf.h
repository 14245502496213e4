/*
 * numasched_scx_groups.bpf.h - the kernel's task groups as the fair share of
 * numasched_scx_fair.bpf.h weighs them: each group's runnable load (its
 * tasks' weights, its active children's shares), counted as tasks become
 * runnable and stop being so, and a task's share of the machine through
 * them.  Included once, by numasched_scx_fair.bpf.h, after struct task_ctx.
 */
#ifndef NUMASCHED_SCX_GROUPS_BPF_H
#define NUMASCHED_SCX_GROUPS_BPF_H

/*
 * Per kernel task group (keyed by its address): the weight of its runnable
 * tasks and of its active child groups, and what it added to its parent's
 * while active.  LRU: a group gone for good is forgotten.
 */
struct group_load
{
	s64			load;
	s64			in_parent;
};

struct
{
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_GROUPS);
	__type(key, u64);
	__type(value, struct group_load);
}			group_loads SEC(".maps");

static struct group_load *
group_load(u64 group, bool create)
{
	struct group_load *g = bpf_map_lookup_elem(&group_loads, &group);
	struct group_load zero = {0};

	if (g || !create)
		return g;
	bpf_map_update_elem(&group_loads, &group, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&group_loads, &group);
}

/* A task's weight (nice) as its group's shares weigh a child group */
static s64
task_shares(const struct task_struct *p)
{
	u32			weight = BPF_CORE_READ(p, scx.weight);

	return (s64) ((weight ? weight : 1) * NICE_0_SHARES / NICE_0_WEIGHT);
}

/*
 * Adds "delta" to a group's load; where that makes the group active or
 * idle, its shares to or from its parent's, and so on up.
 */
static void
add_load(u64 group, s64 delta)
{
	for (u32 depth = 0; depth < MAX_GROUP_DEPTH && group && delta; depth++)
	{
		struct task_group *tg = (struct task_group *) group;
		struct group_load *g = group_load(group, delta > 0);
		s64			before;

		if (!g)
			return;
		before = __sync_fetch_and_add(&g->load, delta);
		if (delta > 0 ? before > 0 : before + delta > 0)
			return;				/* active before and after */
		group = (u64) BPF_CORE_READ(tg, parent);
		if (delta > 0)
			g->in_parent = delta = (s64) BPF_CORE_READ(tg, shares);
		else
			delta = -g->in_parent;
	}
}

/* Counts a task that becomes runnable in its kernel task group */
static void
count_runnable(struct task_struct *p, struct task_ctx *tctx)
{
	if (tctx->group)
		return;
	tctx->group = (u64) BPF_CORE_READ(p, sched_task_group);
	tctx->weight = task_shares(p);
	add_load(tctx->group, tctx->weight);
}

/*
 * A runnable task's share of the machine (1 << SHARE_SHIFT: all of it): its
 * weight against its group's load, times each group's shares against its
 * parent's load, up to the root.
 */
static u64
share_of(const struct task_ctx *tctx)
{
	u64			share = 1ULL << SHARE_SHIFT;
	u64			group = tctx->group;
	s64			weight = tctx->weight;

	for (u32 depth = 0; depth < MAX_GROUP_DEPTH && group; depth++)
	{
		struct task_group *tg = (struct task_group *) group;
		struct group_load *g = group_load(group, false);

		if (g && weight > 0 && g->load > weight)
			share = share * (u64) weight / (u64) g->load;
		weight = (s64) BPF_CORE_READ(tg, shares);
		group = (u64) BPF_CORE_READ(tg, parent);
	}
	return share ? share : 1;
}

#endif							/* NUMASCHED_SCX_GROUPS_BPF_H */
