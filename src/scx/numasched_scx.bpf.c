/*
 * numasched_scx.bpf.c - numasched's placement carried out by the kernel at
 * every wakeup (sched_ext), for PostgreSQL's tasks, beside a fair share for
 * every other task of the machine
 *
 * Every task that is not real-time is scheduled here (no
 * SCX_OPS_SWITCH_PARTIAL: under it the kernel's fair class would run every
 * ordinary task ahead of PostgreSQL's).  Who is PostgreSQL is the kernel's
 * answer, not the task's: a task whose effective uid is the server's
 * (server_uid, from the loader) gets numasched's tiers; any other task, also
 * one that switched itself to SCHED_EXT, gets the fair tier, and its memory
 * policy is not read.
 *
 * The CPU is shared as the kernel shares it: by the kernel's own groups of
 * tasks (cpu cgroups with their cpu.weight, through the hierarchy; where
 * tasks share the root group, their sessions' autogroups), then by nice
 * within a group.  Each task keeps a virtual time, charged with the CPU time
 * it used divided by its share of the machine: its weight against the
 * runnable tasks of its group, times its group's weight against the active
 * groups beside it, up to the root (the groups' loads are counted as tasks
 * become runnable and stop being so).  Normal work, the server's and the
 * fair tier's alike, waits in one queue per node ordered by virtual time,
 * with a slice shorter as more wait; a task that slept is owed at most one
 * slice (its virtual time is raised to a slice behind the most advanced of
 * its node's),
 * so that work that sleeps, as PostgreSQL's does, goes ahead of work that
 * never does, and no more; and it takes a CPU back from a task a
 * background slice or more ahead of it.
 *
 * A server task's home node is what numasched set for it: the node of its
 * memory policy (MPOL_PREFERRED or MPOL_BIND) if its CPU mask has an online
 * CPU there, else the node it last ran on.  Waking up it runs on its previous
 * CPU if idle and at home, else on an idle CPU sharing that CPU's last-level
 * cache, else on an idle CPU of its home node, else of the nearest node in
 * reach (SLIT order; its CPU mask is numasched's reach): no CPU in reach stays
 * idle while it waits.  Otherwise it waits in its home node's queue, which
 * every CPU serves: its own node's first, then the nearest nodes' in SLIT
 * order (and, at any distance, those of a node whose CPUs are all offline).
 * A fair-tier task wakes on an idle CPU nearest its previous one, or
 * waits in the queue of its previous CPU's node, unless another node's has
 * two fewer tasks.
 *
 * Background work (a server task at nice 19: numasched.cpu_priority =
 * background) waits in a queue of its own per node, served when no normal
 * work waits in reach, a short slice at a time, and a CPU running it is
 * taken back at once for normal work that finds no idle CPU.  Each
 * background task is bounded, not each node: a node's queue is served ahead
 * of normal work often enough that each task in it runs within
 * background_wait_ns of its enqueue, one background_slice_ns at a time
 * (with more tasks than that leaves room for, within the time the node's
 * CPUs take to give each of them a slice).
 */
#include "scx_kernel.h"

char		_license[] SEC("license") = "GPL";

#define MAX_CPUS 1024
#define MAX_NODES 64
#define CPU_WORDS (MAX_CPUS / 64)
/* the most CPUs of one last-level cache looked at for a waking task */
#define MAX_CACHE_SCAN 256
/* queue ids: a node's normal queue is its index, its background queue this far above */
#define BACKGROUND_DSQ MAX_NODES
/* sched_ext's weight of nice 19 (1 to 10000, 100 for nice 0) */
#define BACKGROUND_WEIGHT 1
#define NICE_0_WEIGHT 100
/* a nice-0 task's weight as a task group's shares weigh it (CFS: scale_load(1024)) */
#define NICE_0_SHARES (1024ULL << 10)
/* a share of the machine, in fixed point: 1 << SHARE_SHIFT is all of it */
#define SHARE_SHIFT 30
/* the deepest nesting of task groups followed; below it, a group is weighed as its ancestor */
#define MAX_GROUP_DEPTH 16
/* task groups counted at once (cgroups with the cpu controller, autogroups) */
#define MAX_GROUPS 65536

/* set by the loader before the scheduler is loaded */
const volatile u32 nr_cpus = 1;
const volatile u32 nr_nodes = 1;
const volatile u32 server_uid = 0;
const volatile u64 slice_ns = 5000000;
const volatile u64 background_wait_ns = 100000000;
const volatile u64 background_slice_ns = 1000000;
const volatile u8 cpu_node[MAX_CPUS];
/* per CPU: the next CPU of its node that shares its last-level cache, round the cache (itself if none) */
const volatile u16 cache_next[MAX_CPUS];
/* per node: its CPUs, as the kernel's cpumask words */
const volatile u64 node_cpus[MAX_NODES][CPU_WORDS];
/* per node: the other nodes in reach, nearest first */
const volatile u8 steal_order[MAX_NODES][MAX_NODES];
const volatile u8 steal_count[MAX_NODES];

/*
 * What the loader and numasched-scx --monitor report: counters per CPU (no
 * CPU writes another's), summed by the reader.
 */
enum ns_stat
{
	STAT_PREV_IDLE,				/* a server task woke on its idle previous CPU at home */
	STAT_CACHE_IDLE,			/* ... on an idle CPU sharing its previous CPU's cache */
	STAT_HOME_IDLE,				/* ... on another idle CPU of its home node */
	STAT_STOLEN_IDLE,			/* ... on an idle CPU of another node in reach */
	STAT_QUEUED,				/* a server task waited in its home node's queue */
	STAT_SERVED_HOME,			/* a CPU took normal work from its own node's queue */
	STAT_SERVED_AWAY,			/* ... from a nearer node's, in SLIT order (a steal) */
	STAT_SERVED_BACKGROUND,		/* ... background work, no normal work waiting */
	STAT_BACKGROUND_DUE,		/* ... background work ahead of normal work: its wait bound */
	STAT_BACKGROUND_LATE,		/* a background task ran later than background_wait_ns after its enqueue */
	STAT_PREEMPTED,				/* a CPU was taken back from background work or a spent slice */
	STAT_FAIR,					/* a task of the fair tier was queued or placed */
	STAT_FAIR_SCHED_EXT,		/* ... that had switched itself to SCHED_EXT (not the server's) */
	STAT_DISPATCH,				/* a CPU looked for work (dispatch) */
	NR_STATS
};

struct ns_stats
{
	u64			count[NR_STATS];
	u64			longest_background_wait_ns;
	u64			node_served[MAX_NODES];	/* normal work taken from each node's queue */
};

struct
{
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ns_stats);
}			ns_stats SEC(".maps");

/* per CPU, as of the task it runs now */
bool		running_background[MAX_CPUS];
u64			running_vtime[MAX_CPUS];
/* per node: a CPU that last started background work there (a hint to take back) */
s32			background_hint[MAX_NODES];
/* per node: CPUs online at load */
s64			node_online[MAX_NODES];

/* why the kernel unloaded the scheduler (the loader reads it) */
s64			exit_kind;
s64			exit_code;
char		exit_reason[128];
char		exit_msg[256];
/* the kernel's dump of the scheduler's state at an error (the loader prints it) */
#define EXIT_DUMP_LEN 32768
char		exit_dump[EXIT_DUMP_LEN];

/*
 * Array indexes, masked and not range-checked: the verifier does not follow
 * a range check made on a copy of the register, and the compiler drops a
 * mask after a range check.  The loader refuses a machine beyond the limits
 * (powers of 2).
 */
#define CPU_INDEX(cpu) ((u32) (cpu) & (MAX_CPUS - 1))
#define NODE_INDEX(node) ((u32) (node) & (MAX_NODES - 1))

static struct ns_stats *
stats(void)
{
	u32			zero = 0;

	return bpf_map_lookup_elem(&ns_stats, &zero);
}

static void
count(enum ns_stat stat)
{
	struct ns_stats *s = stats();

	if (s && stat < NR_STATS)
		s->count[stat]++;
}

static u32
node_of_cpu(s32 cpu)
{
	return NODE_INDEX(cpu_node[CPU_INDEX(cpu)]);
}

/* Whether p belongs to the server: its effective uid, as the kernel has it */
static bool
is_server(const struct task_struct *p)
{
	return BPF_CORE_READ(p, real_cred, euid.val) == server_uid;
}

static bool
is_background(const struct task_struct *p)
{
	return BPF_CORE_READ(p, scx.weight) <= BACKGROUND_WEIGHT;
}

/* Whether p may run on an online CPU of "node" */
static bool
may_run_on_node(const struct task_struct *p, u32 node)
{
	if (node >= nr_nodes || node_online[NODE_INDEX(node)] <= 0)
		return false;
	for (u32 w = 0; w < CPU_WORDS && w * 64 < nr_cpus; w++)
		if (BPF_CORE_READ(p, cpus_ptr, bits[w]) & node_cpus[NODE_INDEX(node)][w])
			return true;
	return false;
}

/*
 * A server task's home: the lowest node of its memory policy where it may
 * run (a CPU-less node, or one outside its mask, is nobody's home: no CPU it
 * may use serves that queue), else the node it last ran on.
 */
static u32
home_node(const struct task_struct *p)
{
	struct mempolicy *policy = BPF_CORE_READ(p, mempolicy);

	if (policy)
	{
		unsigned short mode = BPF_CORE_READ(policy, mode);
		unsigned long nodes = BPF_CORE_READ(policy, nodes.bits[0]);

		if (mode == MPOL_PREFERRED || mode == MPOL_BIND)
			for (u32 node = 0; node < MAX_NODES && node < nr_nodes; node++)
				if (nodes & (1UL << node))
				{
					if (may_run_on_node(p, node))
						return node;
					break;
				}
	}
	return node_of_cpu(scx_bpf_task_cpu(p));
}

#include "numasched_scx_fair.bpf.h"
#include "numasched_scx_background.bpf.h"

static void
run_here(struct task_struct *p, u64 slice, bool background)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
	{
		tctx->idle_cpu = true;
		/* a background task's wait is counted from here to its running */
		if (background)
			tctx->queued_at = bpf_ktime_get_ns();
	}
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice, 0);
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

/* An idle CPU for a server task: at home first, then in the nearest nodes in reach; -1 if none */
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

static s32
select_server_cpu(struct task_struct *p, s32 prev_cpu)
{
	u32			home = home_node(p);
	bool		background = is_background(p);
	u64			slice = background ? background_slice_ns : slice_ns;
	bool		away;
	s32			cpu;

	if (node_of_cpu(prev_cpu) == home && bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr))
	{
		if (scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		{
			count(STAT_PREV_IDLE);
			run_here(p, slice, background);
			return prev_cpu;
		}
		/* its caches: where numasched's groups follow them, its home group */
		cpu = idle_cpu_sharing_cache(p, prev_cpu);
		if (cpu >= 0)
		{
			count(STAT_CACHE_IDLE);
			run_here(p, slice, background);
			return cpu;
		}
	}
	cpu = pick_idle_cpu(p, home, &away);
	if (cpu < 0)
		return prev_cpu;		/* enqueue puts it in its home queue */
	count(away ? STAT_STOLEN_IDLE : STAT_HOME_IDLE);
	run_here(p, slice, background);
	return cpu;
}

s32			BPF_STRUCT_OPS(ns_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	s32			cpu;

	if (is_server(p))
		return select_server_cpu(p, prev_cpu);
	/* the fair tier: its idle previous CPU, else the nearest idle one */
	if (bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) && scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		cpu = prev_cpu;
	else
		cpu = scx_bpf_pick_idle_cpu_node(p->cpus_ptr, node_of_cpu(prev_cpu), 0);
	if (cpu < 0)
		return prev_cpu;
	count(STAT_FAIR);
	run_here(p, slice_ns, false);
	return cpu;
}

/*
 * Takes "cpu" back for p, queued on "node", if it runs background work, or
 * a task of that node that started a background slice or more ahead of p in
 * virtual time (one that had more than its share): true if so.
 */
static bool
take_back(const struct task_struct *p, s32 cpu, u32 node, u64 vtime)
{
	u32			c = CPU_INDEX(cpu);

	if (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	if (!running_background[c] &&
		(node_of_cpu(cpu) != node || running_vtime[c] <= vtime + background_slice_ns))
		return false;
	count(STAT_PREEMPTED);
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return true;
}

void		BPF_STRUCT_OPS(ns_enqueue, struct task_struct *p, u64 enq_flags)
{
	bool		server = is_server(p);
	bool		background = server && is_background(p);
	u32			node = server ? home_node(p) : fair_node(p);
	u64			now = bpf_ktime_get_ns();
	struct task_ctx *tctx = task_ctx(p);
	u64			vtime;
	bool		away;
	s32			cpu;

	/* the CPU's last runnable task, its slice spent, or one that goes on (dispatch): a slice of ours */
	if (enq_flags & SCX_ENQ_LAST)
	{
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, background ? background_slice_ns : fair_slice(node), enq_flags);
		return;
	}
	if (background)
	{
		/* the clock of its wait bound starts when the queue stops being empty */
		if (scx_bpf_dsq_nr_queued(BACKGROUND_DSQ + node) == 0)
			background_served_at[NODE_INDEX(node)] = now;
		if (tctx)
			tctx->queued_at = now;
		scx_bpf_dsq_insert(p, BACKGROUND_DSQ + node, background_slice_ns, enq_flags);
		count(STAT_QUEUED);
		cpu = pick_idle_cpu(p, node, &away);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}

	vtime = tctx ? queued_vtime(tctx, node) : vtime_now[NODE_INDEX(node)];
	scx_bpf_dsq_insert_vtime(p, node, fair_slice(node), vtime, enq_flags);
	if (server)
	{
		count(STAT_QUEUED);
		cpu = pick_idle_cpu(p, node, &away);
	}
	else
	{
		count(STAT_FAIR);
		if (BPF_CORE_READ(p, policy) == SCHED_EXT)
			count(STAT_FAIR_SCHED_EXT);
		cpu = scx_bpf_pick_idle_cpu_node(p->cpus_ptr, node, 0);
	}
	if (cpu >= 0)
	{
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	/* no idle CPU: one running background work, or a task that had more than its turn */
	if (take_back(p, scx_bpf_task_cpu(p), node, vtime) ||
		take_back(p, background_hint[NODE_INDEX(node)], node, vtime))
		return;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (take_back(p, background_hint[NODE_INDEX(steal_order[NODE_INDEX(node)][i])], node, vtime))
			return;
}

static bool
serve_normal(u32 node, enum ns_stat stat)
{
	struct ns_stats *s;

	if (!scx_bpf_dsq_move_to_local(node))
		return false;
	count(stat);
	s = stats();
	if (s)
		s->node_served[NODE_INDEX(node)]++;
	return true;
}

void		BPF_STRUCT_OPS(ns_dispatch, s32 cpu, struct task_struct *prev)
{
	u32			node = node_of_cpu(cpu);
	u32			c = CPU_INDEX(cpu);
	u64			now = bpf_ktime_get_ns();
	s32			waiting = scx_bpf_dsq_nr_queued(BACKGROUND_DSQ + node);
	bool		prev_normal = prev && (BPF_CORE_READ(prev, scx.flags) & SCX_TASK_QUEUED) &&
		!(is_server(prev) && is_background(prev));

	count(STAT_DISPATCH);

	if (waiting > 0 && serve_background_due(c, node, now, waiting))
		return;
	/* normal work whose slice ran out goes on while it is behind what waits here */
	if (prev_normal && goes_on(prev, node, now))
		return;
	if (serve_normal(node, STAT_SERVED_HOME))
		return;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (serve_normal(steal_order[NODE_INDEX(node)][i], STAT_SERVED_AWAY))
			return;

	/*
	 * Normal work whose slice ran out and finds nothing else is still the
	 * CPU's current task, not in a queue: with nothing dispatched here, the
	 * kernel hands it to enqueue as the CPU's last (SCX_ENQ_LAST), which
	 * gives it a slice of ours, and background work comes due within a
	 * slice.
	 */
	if (prev_normal)
		return;
	if (serve_background(node, now, STAT_SERVED_BACKGROUND))
		return;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (serve_background(steal_order[NODE_INDEX(node)][i], now, STAT_SERVED_BACKGROUND))
			return;
}

/* A task becomes runnable: its weight counts in its group's load */
void		BPF_STRUCT_OPS(ns_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		count_runnable(p, tctx);
}

/* ... and no longer: it counts no more */
void		BPF_STRUCT_OPS(ns_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx && tctx->group)
	{
		add_load(tctx->group, -tctx->weight);
		tctx->group = 0;
	}
}

/* A task comes to this scheduler: it starts level with the most advanced */
void		BPF_STRUCT_OPS(ns_enable, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
	{
		tctx->vnode = node_of_cpu(scx_bpf_task_cpu(p));
		tctx->vtime = vtime_now[NODE_INDEX(tctx->vnode)];
	}
}

void		BPF_STRUCT_OPS(ns_running, struct task_struct *p)
{
	s32			cpu = scx_bpf_task_cpu(p);
	u32			c = CPU_INDEX(cpu);
	bool		background = is_server(p) && is_background(p);
	struct task_ctx *tctx = task_ctx(p);
	u64			now = bpf_ktime_get_ns();

	running_background[c] = background;
	if (!tctx)
		return;
	tctx->started_at = now;
	running_vtime[c] = tctx->vtime;
	if (!background && !tctx->idle_cpu && (s64) (tctx->vtime - vtime_now[NODE_INDEX(tctx->vnode)]) > 0)
		vtime_now[NODE_INDEX(tctx->vnode)] = tctx->vtime;
	tctx->idle_cpu = false;
	if (background)
	{
		struct ns_stats *s = stats();

		background_hint[node_of_cpu(cpu)] = cpu;
		/* since its enqueue or select_cpu, if it came that way */
		if (tctx->queued_at && tctx->queued_at <= now)
		{
			u64			waited = now - tctx->queued_at;

			if (s && waited > s->longest_background_wait_ns)
				s->longest_background_wait_ns = waited;
			if (waited > background_wait_ns)
				count(STAT_BACKGROUND_LATE);
		}
		/* counted once: its next run, without an enqueue, is no new wait */
		tctx->queued_at = 0;
	}
}

/*
 * Charges the CPU time a task used, divided by its share of the machine;
 * background work, a tier of its own, is not charged (back to normal, it
 * starts a slice behind the most advanced at most)
 */
void		BPF_STRUCT_OPS(ns_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx(p);
	u32			c = CPU_INDEX(scx_bpf_task_cpu(p));
	u64			now = bpf_ktime_get_ns();
	u64			used = tctx && tctx->started_at && tctx->started_at < now ? now - tctx->started_at : 0;

	charge_run(c, running_background[c], used);
	if (!running_background[c] && tctx && tctx->started_at)
		tctx->vtime = vtime_with_run(tctx, now);
	running_background[c] = false;
}

/* A higher class took the CPU: what waited in its local queue goes back to ours */
void		BPF_STRUCT_OPS(ns_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	scx_bpf_reenqueue_local();
}

/* sleepable: the loader sets BPF_F_SLEEPABLE (libbpf 1.1 has no SEC("struct_ops.s")) */
s32			BPF_STRUCT_OPS(ns_init)
{
	const struct cpumask *online;

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
		background_hint[node] = -1;
	}
	/*
	 * The CPUs online now, for the whole load: with no cpu_online or
	 * cpu_offline operation, the kernel unloads the scheduler at a CPU
	 * hotplug, pushes every task on by its own rules meanwhile, and asks
	 * for a new load, which the loader makes with the topology of then.
	 * Handled in place, tasks waiting in our queues for a CPU going down
	 * (which dispatches no more) hung its hotplug, and RCU with it.
	 */
	online = scx_bpf_get_online_cpumask();
	for (u32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++)
		if (bpf_cpumask_test_cpu(cpu, online))
			node_online[node_of_cpu(cpu)]++;
	scx_bpf_put_cpumask(online);
	return 0;
}

/* Recorded as scx's UEI_RECORD does: the kind, which the loader polls, last */
void		BPF_STRUCT_OPS(ns_exit, struct scx_exit_info *info)
{
	exit_code = BPF_CORE_READ(info, exit_code);
	bpf_probe_read_kernel_str(exit_reason, sizeof(exit_reason), BPF_CORE_READ(info, reason));
	bpf_probe_read_kernel_str(exit_msg, sizeof(exit_msg), BPF_CORE_READ(info, msg));
	bpf_probe_read_kernel_str(exit_dump, sizeof(exit_dump), BPF_CORE_READ(info, dump));
	asm volatile ("" ::: "memory");
	*(volatile s64 *) &exit_kind = BPF_CORE_READ(info, kind);
}

SEC(".struct_ops")
struct sched_ext_ops numasched_ops = {
	.select_cpu = (void *) ns_select_cpu,
	.enqueue = (void *) ns_enqueue,
	.dispatch = (void *) ns_dispatch,
	.runnable = (void *) ns_runnable,
	.running = (void *) ns_running,
	.stopping = (void *) ns_stopping,
	.quiescent = (void *) ns_quiescent,
	.enable = (void *) ns_enable,
	.cpu_release = (void *) ns_cpu_release,
	.init = (void *) ns_init,
	.exit = (void *) ns_exit,
	/*
	 * every task but real-time ones; idle CPUs per node
	 * (scx_bpf_pick_idle_cpu_node); a CPU's last task, its slice spent,
	 * through enqueue (a slice of ours, not the kernel's default)
	 */
	.flags = SCX_OPS_BUILTIN_IDLE_PER_NODE | SCX_OPS_ENQ_LAST,
	.exit_dump_len = EXIT_DUMP_LEN,
	/* the kernel's most: nothing runnable waits that long here, or the scheduler is at fault */
	.timeout_ms = 30000,
	.name = "numasched",
};
