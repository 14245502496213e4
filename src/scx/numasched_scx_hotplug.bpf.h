/*
 * numasched_scx_hotplug.bpf.h - CPU hotplug in numasched_scx.bpf.c: the
 * scheduler has no cpu_online or cpu_offline operation, so the kernel
 * unloads it at a CPU hotplug, from bypass mode pushes every task on by its
 * own rules, and asks for a new load (SCX_ECODE_ACT_RESTART), which the
 * loader makes with the topology of then.  Handled in place, tasks waiting
 * in our queues for a CPU going down (which dispatches no more) hung its
 * hotplug, and RCU with it, in the test VM.  Within a load, a node with no
 * CPU online is nobody's home.  Included once, by the scheduler, after its
 * settings.
 */
#ifndef NUMASCHED_SCX_HOTPLUG_BPF_H
#define NUMASCHED_SCX_HOTPLUG_BPF_H

/* each node's CPUs online at load */
static void
count_online(void)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();

	for (u32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++)
		if (bpf_cpumask_test_cpu(cpu, online))
			node_online[node_of_cpu(cpu)]++;
	scx_bpf_put_cpumask(online);
}

/*
 * Where a node's work queues: its own queue, or, if it has no CPU online,
 * the nearest node in reach that has, else the first that has
 */
static u32
queue_node(u32 node)
{
	if (node_online[NODE_INDEX(node)] > 0)
		return node;
	for (u32 i = 0; i < MAX_NODES && i < steal_count[NODE_INDEX(node)]; i++)
		if (node_online[NODE_INDEX(steal_order[NODE_INDEX(node)][i])] > 0)
			return steal_order[NODE_INDEX(node)][i];
	for (u32 other = 0; other < MAX_NODES && other < nr_nodes; other++)
		if (node_online[other] > 0)
			return other;
	return node;
}

#endif							/* NUMASCHED_SCX_HOTPLUG_BPF_H */
