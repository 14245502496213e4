/*
 * books.c - a slot in the books: the groups its class allows, the CPUs
 * they give it, a move between groups
 *
 * All with the lock held; what the kernel is told follows from these
 * (binding.c).
 */
#include "postgres.h"

#include "backend/books.h"
#include "backend/state.h"

const ns_cpuset *
numasched_slot_reach(const numasched_slot *slot)
{
	return slot->class_id >= 0 ? &numasched_classes[slot->class_id].reach : NULL;
}

const ns_cpuset *
numasched_slot_home(const numasched_slot *slot)
{
	return slot->class_id >= 0 ? &numasched_classes[slot->class_id].home : NULL;
}

void
numasched_group_cpus_for(const numasched_slot *slot, int group, ns_cpuset *cpus)
{
	ns_settings settings;

	numasched_settings(&settings);
	ns_bound_cpus(numasched_shared_plan(), &settings, group, numasched_slot_home(slot),
				  numasched_slot_reach(slot), slot->background || numasched_companion_in_force(), cpus);
}

void
numasched_keep_off_set_aside(bool aside, ns_cpuset *cpus)
{
	ns_cpuset	rest;

	if (ns_cpuset_empty(&numasched_state->set_aside))
		return;
	if (aside)
		ns_cpuset_and(&rest, cpus, &numasched_state->set_aside);
	else
		ns_cpuset_andnot(&rest, cpus, &numasched_state->set_aside);
	/* with none of them in reach, or nowhere else to run: as it was */
	if (!ns_cpuset_empty(&rest))
		*cpus = rest;
}

void
numasched_slot_kernel_cpus(const numasched_slot *slot, ns_cpuset *cpus)
{
	const ns_plan *plan = numasched_shared_plan();

	if (slot->group >= 0 && slot->group < numasched_state->ngroups)
		numasched_group_cpus_for(slot, slot->group, cpus);
	else
		*cpus = slot->cpus;
	if (!slot->background && slot->lent_group >= 0 && slot->lent_group < numasched_state->ngroups)
		ns_cpuset_or(cpus, cpus, &plan->groups[slot->lent_group].cpus);
	if (slot->visit_group >= 0 && slot->visit_group < numasched_state->ngroups)
		ns_cpuset_or(cpus, cpus, &plan->groups[slot->visit_group].cpus);
	numasched_keep_off_set_aside(slot->aside, cpus);
}

int
numasched_lender_for_locked(int group, const ns_cpuset *reach)
{
	int			lender = numasched_group_lender[group];

	return lender >= 0 && lender < numasched_state->ngroups && ns_in_set(reach, lender) ? lender : -1;
}

void
numasched_move_slot_locked(numasched_slot *slot, int group)
{
	const ns_plan *plan = numasched_shared_plan();
	int			to_node = plan->groups[group].node;
	int			hops = plan->hops[slot->node * plan->topo->nnodes + to_node];

	if (slot->group >= 0)
		ns_loads_add(plan, numasched_shared_loads(), slot->group, -(int64) numasched_slot_load(slot));
	ns_loads_add(plan, numasched_shared_loads(), group, numasched_slot_load(slot));
	slot->group = group;
	slot->node = to_node;
	slot->cpus = plan->groups[group].cpus;
	slot->lent_group = -1;		/* its callers bind it to the group's CPUs */
	slot->visit_group = -1;
	slot->moves++;
	/* a moved process stays put for a while, whoever moved it */
	slot->moved_pass = Max(numasched_state->pass, 1);
	numasched_count(STAT_MOVES, 1);
	numasched_count(hops == 0 ? STAT_MOVES_SAME_NODE :
					hops == 1 ? STAT_MOVES_ONE_HOP : STAT_MOVES_FARTHER, 1);
}
