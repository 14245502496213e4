/*
 * settings.h - the numasched.* settings (settings.c) and the machine they
 * are checked against; below everything else of the glue
 */
#ifndef NUMASCHED_SETTINGS_H
#define NUMASCHED_SETTINGS_H

#include "os/ns_cgroup.h"
#include "os/ns_companion.h"
#include "os/ns_os.h"
#include "core/ns_policy.h"
#include "os/ns_priority.h"
#include "core/ns_topology.h"

#define NUMASCHED_NODES_LEN 256
#define NUMASCHED_GROUPS_LEN 256

/* the settings */
extern bool numasched_enabled;
extern int	numasched_groups_per_node;
extern int	numasched_group_binding;
extern int	numasched_node_binding;
extern int	numasched_parallel_placement;
extern int	numasched_max_steal_distance;
extern int	numasched_memory_policy;
extern int	numasched_rebalance_interval;
extern int	numasched_imbalance_threshold;
extern int	numasched_cross_node_moves;
extern bool numasched_migrate_memory;
extern bool numasched_lend_idle_cpus;
extern bool numasched_lend_at_start;
extern bool numasched_copy_inherited_pages;
extern char *numasched_nodes;
extern char *numasched_cpu_groups;
extern int	numasched_spill;
extern int	numasched_cpu_priority;
extern bool numasched_log_placements;

/* numasched.inject_fault: failures on purpose, for the tests */
typedef enum numasched_fault
{
	FAULT_NONE,
	FAULT_OUT_OF_MEMORY,		/* making room for decisions, before the lock */
	FAULT_ERROR_UNDER_LOCK		/* an ERROR with the lock held */
} numasched_fault;
extern int	numasched_inject_fault;
extern int	numasched_shared_memory;
extern char *numasched_interleave_nodes_list;

typedef enum numasched_group_binding_mode
{
	GROUP_BINDING_PREFERRED,
	GROUP_BINDING_STRICT
} numasched_group_binding_mode;

typedef enum numasched_node_binding_mode
{
	NODE_BINDING_PREFERRED,
	NODE_BINDING_STRICT
} numasched_node_binding_mode;

typedef enum numasched_cross_node_mode
{
	CROSS_NODE_WHEN_WAITING,
	CROSS_NODE_BY_IMBALANCE
} numasched_cross_node_mode;

typedef enum numasched_spill_mode
{
	SPILL_NEAREST,
	SPILL_NEVER
} numasched_spill_mode;

/*
 * Set when a setting of this process's workload class changes (SET, RESET,
 * a reload, a transaction's end): the process moves into its new class at
 * its next statement.
 */
extern bool numasched_class_changed;

/*
 * The plan statement_lending.c last looked at (kept here, so that the
 * settings reach no file above them); a setting that turns the counting of
 * statements on or off forgets it, so that the next statement looks again.
 */
extern uint32 numasched_lend_plan_generation;

static inline void
numasched_forget_lend_plan(void)
{
	numasched_lend_plan_generation = PG_UINT32_MAX;
}

/*
 * A SET statement is running: a class setting it names must fit the session
 * (a function's SET clause and set_config() are checked for syntax only).
 */
extern bool numasched_in_set_statement;

typedef enum numasched_cpu_priority_mode
{
	CPU_PRIORITY_NORMAL,
	CPU_PRIORITY_BACKGROUND
} numasched_cpu_priority_mode;

typedef enum numasched_shared_memory_mode
{
	SHARED_MEMORY_DEFAULT,
	SHARED_MEMORY_INTERLEAVE
} numasched_shared_memory_mode;

/* The machine, read by the postmaster at load time; NULL if it could not be. */
extern ns_topology *numasched_machine;

/*
 * How background priority is given here (postmaster, at load; inherited by
 * every child): the idle child of a cpu cgroup the server may change (any
 * process goes back to normal by moving out of it); else nice 19 for the
 * process's autogroup where autogroups share the CPU (any process may set
 * it back to 0, ten changes a second machine-wide); else SCHED_IDLE, which
 * only RLIMIT_NICE or CAP_SYS_NICE lets a process leave.
 */
typedef enum numasched_priority_way
{
	PRIORITY_BY_SCHED_IDLE,
	PRIORITY_BY_AUTOGROUP,
	PRIORITY_BY_CGROUP
} numasched_priority_way;

extern numasched_priority_way numasched_background_way;

/* with PRIORITY_BY_CGROUP: the cgroups of normal and background processes */
extern ns_cgroup_dirs *numasched_cgroup_dirs;

/* Decides it, and says at LOG what it means here. */
extern void numasched_probe_priority(void);

/* Reads the machine's topology (postmaster, shared_preload_libraries). */
extern void numasched_load_machine(void);

/* Defines the numasched.* settings. */
extern void numasched_define_settings(void);

/* The settings the core's placement and rebalancing read. */
extern void numasched_settings(ns_settings *settings);

/* errdetail() from one of the core's messages: capitalised, with a period */
#define errdetail_from_core(err) \
	errdetail("%c%s.", pg_toupper((unsigned char) (err)[0]), (err) + 1)

#endif							/* NUMASCHED_SETTINGS_H */
