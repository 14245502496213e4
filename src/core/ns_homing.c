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

int
ns_choose_homecomings(const ns_cpuset *idle, int n, const ns_away *away, int *to_cpu)
{
	ns_cpuset	left = *idle;
	int			going = 0;

	for (int i = 0; i < n; i++)
	{
		ns_cpuset	mine;
		int			cpu;

		to_cpu[i] = -1;
		/* one at home already is not away, whatever the caller thought */
		if (away[i].cpu >= 0 && ns_cpuset_test(&away[i].home, away[i].cpu))
			continue;
		ns_cpuset_and(&mine, &left, &away[i].home);
		if ((cpu = ns_cpuset_next(&mine, 0)) < 0)
			continue;
		to_cpu[i] = cpu;
		ns_cpuset_clear(&left, cpu);
		going++;
	}
	return going;
}
