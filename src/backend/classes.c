/*
 * classes.c - workload classes: the values of numasched.nodes, cpu_groups
 * and spill a process was placed with, shared by the slots that name them,
 * and the CPU groups those values mean in the plan in force
 */
#include "postgres.h"

#include "miscadmin.h"

#include "backend/classes.h"
#include "backend/report.h"
#include "backend/state.h"

/* The groups of the plan on these nodes (node ids; NULL: every node). */
static void
groups_on_nodes(const ns_plan *plan, const ns_cpuset *nodes, ns_cpuset *groups)
{
	ns_cpuset_zero(groups);
	for (int g = 0; g < plan->ngroups; g++)
		if (nodes == NULL || ns_cpuset_test(nodes, numasched_machine->nodes[plan->groups[g].node].id))
			ns_cpuset_set(groups, g);
}

/*
 * What a class's settings mean in the groups in force; lock held.  Values
 * checked when they were set may no longer fit after a regroup: then the
 * class uses every group of its nodes (or of all nodes), with one WARNING,
 * rather than failing anybody's connection.
 */
void
numasched_compute_class_locked(numasched_class *class)
{
	const ns_plan *plan = numasched_shared_plan();
	ns_cpuset	nodes,
				on_nodes,
				wanted;
	char		err[NS_ERRLEN];
	bool		fits = true;
	int			g;

	if (class->nodes[0] &&
		ns_cpuset_parse(class->nodes, strlen(class->nodes), NS_MAX_NODES, &nodes, err, sizeof(err)))
		groups_on_nodes(plan, &nodes, &on_nodes);
	else
		groups_on_nodes(plan, NULL, &on_nodes);
	if (ns_cpuset_count(&on_nodes) == 0)
	{
		numasched_report_later(WARNING, "numasched.nodes = '%s' has no CPU group now, its sessions may use every group",
				 class->nodes);
		groups_on_nodes(plan, NULL, &on_nodes);
	}
	class->home = on_nodes;
	if (class->cpu_groups[0])
	{
		ns_cpuset_zero(&class->home);
		if (!ns_cpuset_parse(class->cpu_groups, strlen(class->cpu_groups), NS_MAX_CPUS, &wanted,
							 err, sizeof(err)))
			ns_cpuset_zero(&wanted);
		NS_CPUSET_FOREACH(g, &wanted)
		{
			if (g >= plan->ngroups)
				fits = false;
			else if (ns_cpuset_test(&on_nodes, g))
				ns_cpuset_set(&class->home, g);
		}
		if (!fits || ns_cpuset_count(&class->home) == 0)
		{
			numasched_report_later(WARNING, "numasched.cpu_groups = '%s' does not fit the CPU groups in force (0 to %d) on numasched.nodes = '%s', its sessions use every group of those nodes",
					 class->cpu_groups, plan->ngroups - 1, class->nodes);
			class->home = on_nodes;
		}
	}
	class->reach = class->spill_never ? class->home : on_nodes;
}

/*
 * The class of these settings, with one more slot in it; lock held.  -1 for
 * the default class (every group: no constraint to keep), or when the table
 * is full.
 */
static int
take_class_locked(const char *nodes, const char *cpu_groups, bool spill_never)
{
	int			free_id = -1;
	numasched_class *class;

	if (nodes[0] == '\0' && cpu_groups[0] == '\0')
		return -1;
	/* entries are taken lowest first: the used ones and a free one come early */
	for (int i = 0, used = 0; i < numasched_state->nclasses && (used < numasched_state->classes_used || free_id < 0); i++)
	{
		class = &numasched_classes[i];
		if (class->refs == 0)
		{
			if (free_id < 0)
				free_id = i;
			continue;
		}
		used++;
		if (class->spill_never == spill_never && strcmp(class->nodes, nodes) == 0 &&
				 strcmp(class->cpu_groups, cpu_groups) == 0)
		{
			class->refs++;
			return i;
		}
	}
	/* as many entries as slots, and this process's slot is in none yet */
	if (free_id < 0)
	{
		numasched_report_later(WARNING, "numasched has no room for another workload class (%d are in use), process %d is placed without one",
							   numasched_state->classes_used, (int) MyProcPid);
		return -1;
	}
	class = &numasched_classes[free_id];
	class->refs = 1;
	numasched_state->classes_used++;
	class->spill_never = spill_never;
	strlcpy(class->nodes, nodes, sizeof(class->nodes));
	strlcpy(class->cpu_groups, cpu_groups, sizeof(class->cpu_groups));
	numasched_compute_class_locked(class);
	return free_id;
}

/*
 * A list as one text per set ("1,0" and "0-1" are one class); a list that
 * does not parse (its check hook refused it) as it is.
 */
static void
canonical_list(const char *text, int limit, char *out, size_t outlen)
{
	ns_cpuset	set;
	char		err[NS_ERRLEN];

	if (text == NULL || text[0] == '\0' || !ns_cpuset_parse(text, strlen(text), limit, &set, err, sizeof(err)) ||
		ns_cpuset_format(&set, out, outlen) >= outlen)
		strlcpy(out, text ? text : "", outlen);
}

/* The class of this process's own settings; lock held. */
int
numasched_take_own_class_locked(void)
{
	char		nodes[NUMASCHED_NODES_LEN];
	char		groups[NUMASCHED_GROUPS_LEN];

	canonical_list(numasched_nodes, NS_MAX_NODES, nodes, sizeof(nodes));
	canonical_list(numasched_cpu_groups, NS_MAX_CPUS, groups, sizeof(groups));
	return take_class_locked(nodes, groups, numasched_spill == SPILL_NEVER);
}

void
numasched_drop_class_locked(int class_id)
{
	if (class_id >= 0 && --numasched_classes[class_id].refs == 0)
		numasched_state->classes_used--;
}
