/*
 * statement_lending.h - statements counted in their group, and lent another's CPUs
 */
#ifndef NUMASCHED_BACKEND_STATEMENT_LENDING_H
#define NUMASCHED_BACKEND_STATEMENT_LENDING_H

#include "backend/state.h"

/*
 * A statement that would wait a whole statement for a CPU of its group is
 * lent the CPUs of the nearest group where it would not, until its end
 * (statement_lending.c); "statement" is what tells its end: its QueryDesc
 * or its PlannedStmt.
 */
extern void numasched_statement_start(const void *statement);
extern void numasched_statement_end(const void *statement);
/* whether statements are counted under the plan statement_lending.c last looked at (settings.h) */
extern bool numasched_lend_plan_lends;

/*
 * Whether a statement may be counted: a new plan (or settings) to look at,
 * or one under which statements are counted (on one node with the defaults
 * a statement costs these two loads).
 */
static inline bool
numasched_may_count_statements(void)
{
	return numasched_lend_plan_lends || numasched_state->generation != numasched_lend_plan_generation;
}

#endif							/* NUMASCHED_BACKEND_STATEMENT_LENDING_H */
