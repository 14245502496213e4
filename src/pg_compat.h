/*
 * pg_compat.h - what differs between the PostgreSQL majors numasched builds
 * against (15 to 19), in one place, so that the glue has no version #ifs.
 * 19 needs nothing here: what changed for it (its headers no longer bring
 * tuplestore.h and the type OIDs along) is met by including what is used.
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

#endif							/* PG_COMPAT_H */
