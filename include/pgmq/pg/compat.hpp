// include/pgmq/pg/compat.hpp
// The differences between the PostgreSQL majors pgmq builds against (15, 17,
// 18), in one place: the rest of the adapter calls these and never tests
// PG_VERSION_NUM itself. Included by boundary.hpp, after postgres.h.
#pragma once

extern "C" {
#include "postgres.h"

#include "access/table.h"
#include "catalog/dependency.h"
#include "datatype/timestamp.h"
#include "storage/proc.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"  // the varlena macros left postgres.h in 16
#endif
}

namespace pgmq::pg {

// Whether an interval is +/-infinity (17 added infinite intervals).
inline bool IntervalIsInfinite(const Interval *interval)
{
#if PG_VERSION_NUM >= 170000
	return INTERVAL_NOT_FINITE(interval);
#else
	(void) interval;
	return false;
#endif
}

// This backend's local transaction id (PGPROC.lxid until 16, vxid.lxid from 17).
inline LocalTransactionId MyLocalTransactionId()
{
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

// This backend's index among all PGPROCs, stable for its life (pgprocno
// until 16, GetNumberFromPGProc from 17).
inline int MyProcNumber()
{
#if PG_VERSION_NUM >= 170000
	return GetNumberFromPGProc(MyProc);
#else
	return MyProc->pgprocno;
#endif
}

// The identity sequence of column attnum of relid, or InvalidOid when
// missing_ok (getIdentitySequence takes the opened relation from 17).
inline Oid IdentitySequence(Oid relid, AttrNumber attnum, bool missing_ok)
{
#if PG_VERSION_NUM >= 170000
	Relation relation = table_open(relid, AccessShareLock);
	const Oid sequence = getIdentitySequence(relation, attnum, missing_ok);
	table_close(relation, AccessShareLock);
	return sequence;
#else
	return getIdentitySequence(relid, attnum, missing_ok);
#endif
}

}  // namespace pgmq::pg
