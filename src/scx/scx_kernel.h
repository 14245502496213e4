/*
 * scx_kernel.h - the few kernel types and sched_ext kfuncs numasched-scx uses
 *
 * Written by hand instead of a vmlinux.h dumped from one kernel's BTF, so
 * that the scheduler builds on a machine whose own kernel has no sched_ext
 * (Debian 12's 6.1).  Structures carry preserve_access_index: libbpf
 * relocates every field access against the running kernel's BTF (CO-RE),
 * and matches struct sched_ext_ops's members by name (a subset is enough).
 * The kfuncs are those of 7.2 (Debian sid's kernel, checked against its BTF)
 * under names older kernels share: scx_bpf_dsq_insert, _insert_vtime and
 * scx_bpf_dsq_move_to_local since 6.13 (7.x adds variants beside them, and
 * keeps these), the per-node idle CPU picks since 6.15; an older kernel
 * refuses to load the scheduler, naming the kfunc.
 */
#ifndef SCX_KERNEL_H
#define SCX_KERNEL_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;

#define PAI __attribute__((preserve_access_index))

struct cpumask
{
	unsigned long bits[128];
} PAI;

struct mempolicy
{
	unsigned short mode;
	struct
	{
		unsigned long bits[16];
	}			nodes;
} PAI;

struct sched_ext_entity
{
	u32			flags;
	u32			weight;
	u64			slice;			/* the scheduler's to write */
	u64			dsq_vtime;		/* the scheduler's to write */
} PAI;

typedef struct
{
	unsigned int val;
}			kuid_t;

/* the kernel's group of a task: its cpu cgroup, or its session's autogroup */
struct task_group
{
	struct task_group *parent;
	unsigned long shares;		/* cpu.weight (or the autogroup's nice) as CFS weighs it */
} PAI;

struct cred
{
	kuid_t		euid;
} PAI;

struct task_struct
{
	int			pid;
	int			tgid;
	unsigned int policy;
	const struct cred *real_cred;
	const struct cpumask *cpus_ptr;
	struct mempolicy *mempolicy;
	struct task_group *sched_task_group;
	struct sched_ext_entity scx;
} PAI;

enum scx_exit_kind
{
	SCX_EXIT_NONE = 0,
};

struct scx_exit_info
{
	enum scx_exit_kind kind;
	s64			exit_code;
	const char *reason;
	char	   *msg;
	char	   *dump;
} PAI;

struct scx_init_task_args;
struct scx_exit_task_args;
struct scx_cpu_release_args;

struct sched_ext_ops
{
	s32			(*select_cpu) (struct task_struct *p, s32 prev_cpu, u64 wake_flags);
	void		(*enqueue) (struct task_struct *p, u64 enq_flags);
	void		(*dispatch) (s32 cpu, struct task_struct *prev);
	void		(*runnable) (struct task_struct *p, u64 enq_flags);
	void		(*running) (struct task_struct *p);
	void		(*stopping) (struct task_struct *p, bool runnable);
	void		(*quiescent) (struct task_struct *p, u64 deq_flags);
	void		(*tick) (struct task_struct *p);
	void		(*cpu_release) (s32 cpu, struct scx_cpu_release_args *args);
	void		(*cpu_online) (s32 cpu);
	void		(*cpu_offline) (s32 cpu);
	void		(*enable) (struct task_struct *p);
	s32			(*init) (void);
	void		(*exit) (struct scx_exit_info *info);
	u64			flags;
	u32			timeout_ms;
	u32			exit_dump_len;
	char		name[128];
};

/* a sched_ext_ops callback, as the kernel's tools/sched_ext define it */
#define BPF_STRUCT_OPS(name, args...) SEC("struct_ops/" #name) BPF_PROG(name, ##args)

/* enum mempolicy's modes (uapi) */
#define MPOL_PREFERRED 1
#define MPOL_BIND 2

/* the scheduling policy of sched_ext (uapi) */
#define SCHED_EXT 7

/* sched_ext's constants, stable since 6.12 */
#define SCX_DSQ_LOCAL (1ULL << 63 | 2)
#define SCX_ENQ_WAKEUP 1ULL
#define SCX_ENQ_LAST (1ULL << 41)	/* the CPU's last runnable task, its slice spent */
#define SCX_OPS_ENQ_LAST 2ULL
#define SCX_TASK_QUEUED 1		/* sched_ext_entity.flags: runnable */
#define SCX_KICK_IDLE 1
#define SCX_KICK_PREEMPT 2
#define SCX_OPS_BUILTIN_IDLE_PER_NODE 64ULL
#define SCX_PICK_IDLE_IN_NODE 2

/* an iterator over a queue's tasks, in its order (the kernel's size for it) */
struct bpf_iter_scx_dsq
{
	u64			__opaque[6];
} __attribute__((aligned(8)));

/* the kfuncs */
int bpf_iter_scx_dsq_new(struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags) __ksym;
struct task_struct *bpf_iter_scx_dsq_next(struct bpf_iter_scx_dsq *it) __ksym;
void bpf_iter_scx_dsq_destroy(struct bpf_iter_scx_dsq *it) __ksym;
s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime, u64 enq_flags) __ksym;
u32 scx_bpf_reenqueue_local(void) __ksym;
const struct cpumask *scx_bpf_get_online_cpumask(void) __ksym;
void scx_bpf_put_cpumask(const struct cpumask *cpumask) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;
s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym;
s32 scx_bpf_pick_idle_cpu_node(const struct cpumask *cpus_allowed, s32 node, u64 flags) __ksym;
bool scx_bpf_test_and_clear_cpu_idle(s32 cpu) __ksym;
bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;
void scx_bpf_kick_cpu(s32 cpu, u64 flags) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;

#endif							/* SCX_KERNEL_H */
