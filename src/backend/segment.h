/*
 * segment.h - the main shared memory segment
 */
#ifndef NUMASCHED_BACKEND_SEGMENT_H
#define NUMASCHED_BACKEND_SEGMENT_H

#include "postgres.h"
#include "core/ns_cpuset.h"

/*
 * The main shared memory segment: found as the mapping that holds our own
 * ShmemInitStruct, checked by its header's magic number; with "pmd_mapped",
 * how much of it this process maps as transparent huge pages.
 */
extern bool numasched_main_segment(char **start, Size *length, Size *page_size, Size *pmd_mapped);

/* The nodes shared memory is interleaved over (node ids). */
extern void numasched_interleave_nodes(ns_cpuset *nodes);

/*
 * The postmaster interleaves what it allocates until the main segment is
 * initialised (shmem_request_hook: before the segment is created), so that
 * the pages it initialises land where the segment's interleave policy puts
 * them.
 */
extern void numasched_interleave_initialisation(void);

/*
 * Then (shmem_startup_hook) it allocates as before, the segment gets its
 * interleave policy, and any resident page elsewhere is moved to its
 * interleave node; before a crash restart's new segment the first step is
 * taken again.
 */
extern void numasched_interleave_shared_memory(void);

/*
 * Otherwise the segment keeps the policy the postmaster inherited, or, of
 * huge pages, gets the local one, so that no process's own policy can make a
 * fault find an empty node pool (SIGBUS).
 */
extern void numasched_guard_segment(void);

#endif							/* NUMASCHED_BACKEND_SEGMENT_H */
