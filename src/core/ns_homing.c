/*
 * ns_homing.c - bringing home a process the kernel ran on another node
 */
#include "core/ns_homing.h"

int
ns_idle_cpus(const uint64_t *idle_before, const uint64_t *idle_now, int ncpus,
			 uint64_t elapsed_us, ns_cpuset *idle)
{
	int			n = 0;

	ns_cpuset_zero(idle);
	if (elapsed_us == 0)
		return 0;
	for (int cpu = 0; cpu < ncpus && cpu < NS_MAX_CPUS; cpu++)
		if (idle_now[cpu] > idle_before[cpu] &&
			(idle_now[cpu] - idle_before[cpu]) * 100 >= elapsed_us * NS_HOMING_IDLE_PERCENT)
		{
			ns_cpuset_set(idle, cpu);
			n++;
		}
	return n;
}

static bool
is_away(const ns_away *a)
{
	return a->cpu >= 0 && !ns_cpuset_empty(&a->home) && !ns_cpuset_test(&a->home, a->cpu);
}

static bool
in_cycle(int j, const int *cycle, int len)
{
	for (int k = 0; k < len; k++)
		if (cycle[k] == j)
			return true;
	return false;
}

/*
 * From process i, each next one away on a CPU of the last one's home,
 * until one whose home holds i's CPU: the members, in cycle[], each to go
 * to the next one's CPU and the last to i's; their count, or 0 where the
 * chain ends first (the first such next one is followed, no other).
 */
static int
cycle_from(int i, int n, const ns_away *away, const int *to_cpu, int *cycle)
{
	int			len = 0;

	cycle[len++] = i;
	while (len < NS_HOMING_MAX_CYCLE)
	{
		int			last = cycle[len - 1];
		int			next = -1;

		for (int j = 0; j < n && next < 0; j++)
			if (to_cpu[j] < 0 && is_away(&away[j]) && !in_cycle(j, cycle, len) &&
				ns_cpuset_test(&away[last].home, away[j].cpu))
				next = j;
		if (next < 0)
			return 0;
		cycle[len++] = next;
		if (ns_cpuset_test(&away[next].home, away[i].cpu))
			return len;
	}
	return 0;
}

int
ns_choose_homecomings(const ns_cpuset *idle, int n, const ns_away *away, int *to_cpu)
{
	ns_cpuset	left = *idle;
	int			going = 0;

	for (int i = 0; i < n; i++)
		to_cpu[i] = -1;
	for (int i = 0; i < n; i++)
	{
		ns_cpuset	mine;
		int			cpu;
		int			cycle[NS_HOMING_MAX_CYCLE];
		int			len;

		if (to_cpu[i] >= 0 || !is_away(&away[i]))
			continue;
		ns_cpuset_and(&mine, &left, &away[i].home);
		if ((cpu = ns_cpuset_next(&mine, 0)) >= 0)
		{
			to_cpu[i] = cpu;
			ns_cpuset_clear(&left, cpu);
			going++;
		}
		else if ((len = cycle_from(i, n, away, to_cpu, cycle)) > 0)
		{
			for (int k = 0; k < len; k++)
				to_cpu[cycle[k]] = away[cycle[(k + 1) % len]].cpu;
			going += len;
		}
	}
	return going;
}
