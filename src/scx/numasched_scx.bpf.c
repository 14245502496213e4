/*
 * numasched_scx.bpf.c - numasched's placement carried out by the kernel at
 * every wakeup (sched_ext)
 *
 * Only tasks that set SCHED_EXT themselves are scheduled here
 * (SCX_OPS_SWITCH_PARTIAL): PostgreSQL's backends and parallel workers when
 * numasched sees this scheduler loaded; every other task of the machine stays
 * with the kernel's own scheduler.
 *
 * A task's home node is what numasched already set for it: the node of its
 * memory policy (MPOL_PREFERRED or MPOL_BIND), else the node it last ran on.
 * A task waking up runs on its previous CPU if idle and at home, else on an
 * idle CPU sharing that CPU's last-level cache, else on an idle CPU of its
 * home node, else on an idle CPU of the nearest node within reach (SLIT
 * order; its CPU mask is numasched's reach, max_steal_distance and class):
 * no CPU in reach stays idle while it waits.
 * Its memory policy keeps its allocations home while it is away.
 * Otherwise it waits in its home node's queue, which every CPU serves: its
 * own node's first, then the nearest nodes' in SLIT order.
 *
 * Background work (nice 19: numasched.cpu_priority = background) waits in
 * queues of its own, served only when no normal work waits in reach, and
 * a CPU running it is taken back at once for normal work that finds no idle
 * CPU.  It never starves: a node's background queue is served first once its
 * oldest entry has waited background_wait_ns.
 */
#include "scx_kernel.h"

char		_license[] SEC("license") = "GPL";

#define MAX_CPUS 1024
#define MAX_NODES 64
/* the most CPUs of one last-level cache looked at for a waking task */
#define MAX_CACHE_SCAN 256
/* queue ids: a node's normal queue is its index, its background queue this far above */
#define BACKGROUND_DSQ MAX_NODES
/* sched_ext's weight of nice 19 (1 to 10000, 100 for nice 0) */
#define BACKGROUND_WEIGHT 1

/* set by the loader before the scheduler is loaded */
const volatile u32 nr_cpus = 1;
const volatile u32 nr_nodes = 1;
const volatile u64 slice_ns = SCX_SLICE_DFL;
const volatile u64 background_wait_ns = 100000000;
const volatile u8 cpu_node[MAX_CPUS];
/* per CPU: the next CPU of its node that shares its last-level cache, round the cache (itself if none) */
const volatile u16 cache_next[MAX_CPUS];
const volatile bool node_has_cpus[MAX_NODES];
/* per node: the other nodes in reach, nearest first */
const volatile u8 steal_order[MAX_NODES][MAX_NODES];
const volatile u8 steal_count[MAX_NODES];

/* what the loader reports */
enum ns_stat
{
	STAT_PREV_IDLE,				/* woke on its idle previous CPU at home */
	STAT_CACHE_IDLE,			/* woke on an idle CPU sharing its previous CPU's cache */
	STAT_HOME_IDLE,				/* woke on another idle CPU of its home node */
	STAT_STOLEN_IDLE,			/* woke on an idle CPU of another node in reach */
	STAT_QUEUED,				/* waited in its home node's queue */
	STAT_SERVED_HOME,			/* a CPU took work from its own node's queue */
	STAT_SERVED_AWAY,			/* ... from a nearer node's, in SLIT order */
	STAT_SERVED_BACKGROUND,		/* ... from a background queue */
	STAT_BACKGROUND_DUE,		/* ... from a background queue before normal work: waited too long */
	STAT_PREEMPTED,				/* a CPU running background work was taken back */
	NR_STATS
};
u64			stats[NR_STATS];
bool		running_background[MAX_CPUS];
/* per node: since when its background queue's oldest entry has waited (0: empty) */
u64			background_waiting_since[MAX_NODES];
s64			exit_kind;
char		exit_reason[128];
char		exit_msg[256];

static void
count(enum ns_stat stat)
{
	if (stat < NR_STATS)
		__sync_fetch_and_add(&stats[stat], 1);
}

/*
 * Array indexes, masked and not range-checked: the verifier does not follow
 * a range check made on a copy of the register, and the compiler drops a
 * mask after a range check.  The loader refuses a machine beyond the limits
 * (powers of 2).
 */
#define CPU_INDEX(cpu) ((u32) (cpu) & (MAX_CPUS - 1))
#define NODE_INDEX(node) ((u32) (node) & (MAX_NODES - 1))

static u32
node_of_cpu(s32 cpu)
{
	return NODE_INDEX(cpu_node[CPU_INDEX(cpu)]);
}

static u32
home_node(const struct task_struct *p)
{
	struct mempolicy *policy = BPF_CORE_READ(p, mempolicy);

	if (policy)
	{
		unsigned short mode = BPF_CORE_READ(policy, mode);
		unsigned long nodes = BPF_CORE_READ(policy, nodes.bits[0]);

		/* the lowest node of the mask (BPF has no count of trailing zeros) */
		if (mode == MPOL_PREFERRED || mode == MPOL_BIND)
			for (u32 node = 0; node < MAX_NODES && node < nr_nodes; node++)
				if (nodes & (1UL << node))
				{
					/* a CPU-less (CXL) node is nobody's home: no CPU serves its queue */
					if (node_has_cpus[NODE_INDEX(node)])
						return node;
					break;
				}
	}
	return node_of_cpu(scx_bpf_task_cpu(p));
}

static bool
is_background(const struct task_struct *p)
{
	return BPF_CORE_READ(p, scx.weight) <= BACKGROUND_WEIGHT;
}

/* An idle CPU p may use that shares prev's last-level cache, the next after prev in the cache's round; -1 if none */
static s32
idle_cpu_sharing_cache(const struct task_struct *p, s32 prev)
{
	s32			cpu = prev;

	for (u32 i = 0; i < MAX_CACHE_SCAN; i++)
	{
		cpu = cache_next[CPU_INDEX(cpu)];
		if (cpu == prev)
			break;
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	}
	return -1;
}

/* An idle CPU for p: at home first, then in the nearest nodes in reach; -1 if none */
static s32
pick_idle_cpu(const struct task_struct *p, u32 home, bool *away)
{
	s32			cpu;

	*away = false;
	cpu = scx_bpf_pick_idle_cpu_node(p->cpus_ptr, home, SCX_PICK_IDLE_IN_NODE);
	if (cpu >= 0)
		return cpu;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(home)]; i++)
	{
		cpu = scx_bpf_pick_idle_cpu_node(p->cpus_ptr, steal_order[NODE_INDEX(home)][i], SCX_PICK_IDLE_IN_NODE);
		if (cpu >= 0)
		{
			*away = true;
			return cpu;
		}
	}
	return -1;
}

s32			BPF_STRUCT_OPS(ns_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	u32			home = home_node(p);
	bool		away;
	s32			cpu;

	if (node_of_cpu(prev_cpu) == home)
	{
		if (scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		{
			count(STAT_PREV_IDLE);
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
			return prev_cpu;
		}
		/* its caches: where numasched's groups follow them, its home group */
		cpu = idle_cpu_sharing_cache(p, prev_cpu);
		if (cpu >= 0)
		{
			count(STAT_CACHE_IDLE);
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
			return cpu;
		}
	}
	cpu = pick_idle_cpu(p, home, &away);
	if (cpu < 0)
		return prev_cpu;		/* enqueue puts it in its home queue */
	count(away ? STAT_STOLEN_IDLE : STAT_HOME_IDLE);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

/* A CPU running background work, at home first, then in reach; -1 if none */
static s32
background_cpu(u32 home)
{
	s32			in_reach = -1;

	for (s32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++)
	{
		u32			node = node_of_cpu(cpu);

		if (!running_background[CPU_INDEX(cpu)])
			continue;
		if (node == home)
			return cpu;
		if (in_reach >= 0)
			continue;
		for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(home)]; i++)
			if (steal_order[NODE_INDEX(home)][i] == node)
				in_reach = cpu;
	}
	return in_reach;
}

void		BPF_STRUCT_OPS(ns_enqueue, struct task_struct *p, u64 enq_flags)
{
	u32			home = home_node(p);
	bool		background = is_background(p);
	bool		away;
	s32			cpu;

	count(STAT_QUEUED);
	if (background)
	{
		if (scx_bpf_dsq_nr_queued(BACKGROUND_DSQ + home) == 0)
			background_waiting_since[NODE_INDEX(home)] = bpf_ktime_get_ns();
		scx_bpf_dsq_insert(p, BACKGROUND_DSQ + home, slice_ns, enq_flags);
	}
	else
		scx_bpf_dsq_insert(p, home, slice_ns, enq_flags);

	/* wake an idle CPU in reach to take it, or take one back from background work */
	cpu = pick_idle_cpu(p, home, &away);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	else if (!background && (cpu = background_cpu(home)) >= 0)
	{
		count(STAT_PREEMPTED);
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	}
}

static bool
serve_background(u32 node, enum ns_stat stat)
{
	if (!scx_bpf_dsq_move_to_local(BACKGROUND_DSQ + node))
		return false;
	count(stat);
	background_waiting_since[NODE_INDEX(node)] = scx_bpf_dsq_nr_queued(BACKGROUND_DSQ + node) ? bpf_ktime_get_ns() : 0;
	return true;
}

void		BPF_STRUCT_OPS(ns_dispatch, s32 cpu, struct task_struct *prev)
{
	u32			node = node_of_cpu(cpu);
	u64			since = background_waiting_since[NODE_INDEX(node)];

	/* the bound on background work's wait */
	if (since && bpf_ktime_get_ns() - since > background_wait_ns &&
		serve_background(node, STAT_BACKGROUND_DUE))
		return;
	if (scx_bpf_dsq_move_to_local(node))
	{
		count(STAT_SERVED_HOME);
		return;
	}
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (scx_bpf_dsq_move_to_local(steal_order[NODE_INDEX(node)][i]))
		{
			count(STAT_SERVED_AWAY);
			return;
		}

	/*
	 * Normal work whose slice ran out is still the CPU's current task, not
	 * in a queue: the kernel keeps it running if nothing is dispatched.
	 */
	if (prev && (BPF_CORE_READ(prev, scx.flags) & SCX_TASK_QUEUED) && !is_background(prev))
		return;
	if (serve_background(node, STAT_SERVED_BACKGROUND))
		return;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (serve_background(steal_order[NODE_INDEX(node)][i], STAT_SERVED_BACKGROUND))
			return;
}

void		BPF_STRUCT_OPS(ns_running, struct task_struct *p)
{
	running_background[CPU_INDEX(scx_bpf_task_cpu(p))] = is_background(p);
}

void		BPF_STRUCT_OPS(ns_stopping, struct task_struct *p, bool runnable)
{
	running_background[CPU_INDEX(scx_bpf_task_cpu(p))] = false;
}

/* sleepable: the loader sets BPF_F_SLEEPABLE (libbpf 1.1 has no SEC("struct_ops.s")) */
s32			BPF_STRUCT_OPS(ns_init)
{
	/*
	 * Puts struct cpumask's definition, not a forward declaration, in this
	 * object's BTF: libbpf 1.1 matches a kfunc's prototype against the
	 * kernel's kind by kind, and a forward one does not match.
	 */
	if (!bpf_core_type_exists(struct cpumask))
		return -22;
	for (u32 node = 0; node < MAX_NODES && node < nr_nodes; node++)
	{
		s32			err = scx_bpf_create_dsq(node, node);

		if (err)
			return err;
		err = scx_bpf_create_dsq(BACKGROUND_DSQ + node, node);
		if (err)
			return err;
	}
	return 0;
}

void		BPF_STRUCT_OPS(ns_exit, struct scx_exit_info *info)
{
	exit_kind = BPF_CORE_READ(info, kind);
	bpf_probe_read_kernel_str(exit_reason, sizeof(exit_reason), BPF_CORE_READ(info, reason));
	bpf_probe_read_kernel_str(exit_msg, sizeof(exit_msg), BPF_CORE_READ(info, msg));
}

SEC(".struct_ops")
struct sched_ext_ops numasched_ops = {
	.select_cpu = (void *) ns_select_cpu,
	.enqueue = (void *) ns_enqueue,
	.dispatch = (void *) ns_dispatch,
	.running = (void *) ns_running,
	.stopping = (void *) ns_stopping,
	.init = (void *) ns_init,
	.exit = (void *) ns_exit,
	.flags = SCX_OPS_SWITCH_PARTIAL | SCX_OPS_BUILTIN_IDLE_PER_NODE,
	.name = "numasched",
};
