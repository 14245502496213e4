/*
 * regroup.c - the plan in force: rebuilt from numasched.groups_per_node by
 * the first process that has seen a change of it, with the classes and the
 * placed processes counted again into the new groups
 *
 * The plan in force lives in shared memory.  A process whose settings differ
 * from it and are at least as new (PgReloadTime: a new backend after a reload
 * is forked with the postmaster's fresh settings) rebuilds it and re-counts
 * the placed processes into the new groups; everybody else just reads it.  So
 * an exiting process or a view never needs settings of its own, and a process
 * that has not yet seen a reload never turns the groups back.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/postmaster.h"

#include "backend/regroup.h"
#include "backend/binding.h"
#include "backend/books.h"
#include "backend/classes.h"
#include "backend/report.h"
#include "backend/state.h"

bool
numasched_sync_plan(void)
{
	int			groups_per_node = numasched_groups_per_node;
	bool		share = numasched_group_binding == GROUP_BINDING_PREFERRED;
	bool		share_nodes = share && numasched_node_binding == NODE_BINDING_PREFERRED;
	ns_plan    *plan;
	const ns_plan *shared;
	ns_settings settings;
	char		err[NS_ERRLEN];

	if (numasched_machine == NULL)
		return false;
	/* a value already found not to fit: the groups in force stay */
	if (numasched_state->configured && numasched_state->failed_groups_per_node == groups_per_node)
		groups_per_node = numasched_state->groups_per_node;
	if (numasched_state->configured &&
		((numasched_state->groups_per_node == groups_per_node &&
		  numasched_state->groups_share_node == share &&
		  numasched_state->nodes_shared == share_nodes) ||
	/* settings older than the plan's: this process has not seen a reload */
		 PgReloadTime < numasched_state->settings_loaded_at))
		return true;

	/*
	 * The groups cover every node with usable CPUs: numasched.nodes limits
	 * sessions (their class), not the groups, so group ids stay what they
	 * are whatever a role's nodes.  The check hook refuses a value some node
	 * cannot be split into; the CPUs usable may still differ (a process
	 * started under another cpuset), so a plan that cannot be built leaves
	 * the groups as they are, or at server start makes one group per node.
	 */
	errno = 0;
	plan = ns_plan_build(numasched_machine, groups_per_node, NULL, err, sizeof(err));
	if (plan == NULL)
	{
		numasched_report_later(WARNING, "numasched cannot use numasched.groups_per_node = %d, %s: %s",
				 groups_per_node,
				 numasched_state->configured ? "the CPU groups stay as they are" :
				 "using one group per node", err);
		/* a value that does not fit is not tried again; out of memory, it is next time */
		if (errno != ENOMEM)
			numasched_state->failed_groups_per_node = groups_per_node;
		if (numasched_state->configured)
			return true;
		groups_per_node = 1;
		if ((plan = ns_plan_build(numasched_machine, groups_per_node, NULL, err, sizeof(err))) == NULL)
			return false;
	}
	else if (groups_per_node == numasched_groups_per_node)
		numasched_state->failed_groups_per_node = -1;

	/*
	 * Lending is between the old groups: it ends here, each process back on
	 * its own group's CPUs before the lender's are forgotten, so that the
	 * books never name CPUs of the wrong plan.
	 */
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
		if (numasched_slots[i].lent_group >= 0 || numasched_slots[i].visit_group >= 0)
		{
			ns_cpuset	cpus;

			numasched_slots[i].lent_group = -1;
			numasched_slots[i].visit_group = -1;
			numasched_slot_kernel_cpus(&numasched_slots[i], &cpus);
			(void) numasched_bind_slot_locked(&numasched_slots[i], &cpus);
		}
	plan->groups_share_node = share;
	plan->nodes_shared = share_nodes;
	numasched_copy_plan_to_shared(plan);
	ns_plan_free(plan);

	/*
	 * What the classes mean in the new groups; then re-count what is placed,
	 * by the CPUs it has.  A process whose group is not its class's any more
	 * is placed again in its class (the scheduler binds it, and it brings its
	 * memory along at its next statement).
	 */
	shared = numasched_shared_plan();
	for (int c = 0, used = 0; c < numasched_state->nclasses && used < numasched_state->classes_used; c++)
		if (numasched_classes[c].refs > 0)
		{
			numasched_compute_class_locked(&numasched_classes[c]);
			used++;
		}
	numasched_settings(&settings);
	ns_loads_reset(shared, numasched_shared_loads());
	for (int i = numasched_next_slot(0); i >= 0; i = numasched_next_slot(i + 1))
	{
		numasched_slot *slot = &numasched_slots[i];
		const ns_cpuset *reach = numasched_slot_reach(slot);

		slot->group = ns_group_of_cpu(shared, ns_cpuset_next(&slot->cpus, 0));
		if (slot->group < 0 || (reach && !ns_cpuset_test(reach, slot->group)))
		{
			ns_request	request = {slot->kind == NUMASCHED_PARALLEL_WORKER, -1, -1, -1, 0,
			numasched_slot_home(slot), reach, -1};
			ns_placement where;

			ns_place(shared, numasched_shared_loads(), &settings, &request, &where);
			slot->group = where.group;
		}
		slot->node = shared->groups[slot->group].node;
		ns_loads_add(shared, numasched_shared_loads(), slot->group, numasched_slot_load(slot));
	}
	numasched_state->configured = true;
	numasched_state->groups_per_node = groups_per_node;
	numasched_state->settings_loaded_at = PgReloadTime;
	numasched_state->generation++;
	return true;
}
