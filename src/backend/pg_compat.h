/*
 * pg_compat.h - what differs between the PostgreSQL majors numasched builds
 * against (15 to 19), in one place, so that the glue has no version #ifs.
 * What else changed for 19 (its headers no longer bring tuplestore.h and
 * the type OIDs along) is met by including what is used.
 */
#ifndef PG_COMPAT_H
#define PG_COMPAT_H

#include "storage/proc.h"

/* InitMaterializedSRF (the views) was SetSingleFuncCall in 15.0 */
#if PG_VERSION_NUM < 150001
#error "numasched needs PostgreSQL 15.1 or later"
#endif

/* A PGPROC's index in ProcGlobal->allProcs: a field until 16, a function since */
#if PG_VERSION_NUM >= 170000
#define numasched_procno(proc) GetNumberFromPGProc(proc)
#else
#define numasched_procno(proc) ((proc)->pgprocno)
#endif

/* 18 lets a module say its name and version (pg_get_loaded_modules) */
#if PG_VERSION_NUM >= 180000
#define NUMASCHED_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "numasched", .version = NUMASCHED_VERSION)
#else
#define NUMASCHED_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/* 19 hands the planner the EXPLAIN it plans for, if any */
#if PG_VERSION_NUM >= 190000
#define NUMASCHED_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams, ExplainState *es
#define NUMASCHED_PLANNER_ARGS parse, query_string, cursorOptions, boundParams, es
#else
#define NUMASCHED_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams
#define NUMASCHED_PLANNER_ARGS parse, query_string, cursorOptions, boundParams
#endif

#endif							/* PG_COMPAT_H */
