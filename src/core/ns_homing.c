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

/* One of the first n away on a CPU of i's home whose home holds i's CPU; -1: none. */
static int
partner_of(int i, int n, const ns_away *away, const int *to_cpu)
{
	for (int j = 0; j < n; j++)
		if (j != i && to_cpu[j] < 0 && is_away(&away[j]) &&
			ns_cpuset_test(&away[i].home, away[j].cpu) && ns_cpuset_test(&away[j].home, away[i].cpu))
			return j;
	return -1;
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
		int			j;

		if (to_cpu[i] >= 0 || !is_away(&away[i]))
			continue;
		ns_cpuset_and(&mine, &left, &away[i].home);
		if ((cpu = ns_cpuset_next(&mine, 0)) >= 0)
		{
			to_cpu[i] = cpu;
			ns_cpuset_clear(&left, cpu);
			going++;
		}
		else if ((j = partner_of(i, n, away, to_cpu)) >= 0)
		{
			to_cpu[i] = away[j].cpu;
			to_cpu[j] = away[i].cpu;
			going += 2;
		}
	}
	return going;
}
