// src/pg/default_partition.cpp
// Rows in a default partition, for the overrun signal (see
// default_partition.hpp). Why not pg_class.reltuples alone: it is -1 until
// autovacuum or ANALYZE first visits the default partition, a minute or more
// after a spill, so the metric operators alert on read 0 exactly when it
// mattered. Why not count(*): a spill can be millions of rows, and a scrape
// must stay cheap.
#include "pgmq/core/partition.hpp"

#include "pgmq/pg/default_partition.hpp"

extern "C" {
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
}

namespace pgmq::pg {

namespace {

// Whether the caller could see rows of the parent at all: SELECT on it and
// no row security applying (which the scan, bypassing the executor, would
// not apply). Only then is the partition scanned.
bool MayProbe(Oid parent_relid)
{
	return pg_class_aclcheck(parent_relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
	       check_enable_rls(parent_relid, InvalidOid, true) != RLS_ENABLED;
}

// Reads until the first row visible to the statement's snapshot: cost does
// not grow with the rows there, only with leading pages of dead rows (as
// after a recovery, until vacuum), which the queue's own count(*) in metrics
// reads too. Table access method code only: no trigger, rule, policy or
// function of the table's owner runs.
bool HasVisibleRow(Relation rel)
{
	Snapshot snapshot = ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot();
	TableScanDesc scan = table_beginscan(rel, snapshot, 0, nullptr);
	TupleTableSlot *slot = table_slot_create(rel, nullptr);
	const bool found = table_scan_getnextslot(scan, ForwardScanDirection, slot);
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	return found;
}

}  // namespace

bool DefaultPartitionRows(Oid parent_relid, int64 *rows)
{
	*rows = 0;
	if (!OidIsValid(parent_relid) || get_rel_relkind(parent_relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	// The catalog's own record of the parent's default partition: a table
	// named <parent>_default may be anyone's.
	const Oid default_relid = get_default_partition_oid(parent_relid);
	if (!OidIsValid(default_relid) || get_rel_relkind(default_relid) != RELKIND_RELATION)
		return true;
	core::DefaultPartitionEvidence evidence;
	const Datum relid_datum = ObjectIdGetDatum(default_relid);
	evidence.tuples_inserted = DatumGetInt64(DirectFunctionCall1(pg_stat_get_tuples_inserted, relid_datum));
	evidence.live_tuples = DatumGetInt64(DirectFunctionCall1(pg_stat_get_live_tuples, relid_datum));
	// The lock count(*) on the parent takes too; released at once.
	Relation rel = table_open(default_relid, AccessShareLock);
	evidence.reltuples = rel->rd_rel->reltuples;
	if (MayProbe(parent_relid))
		evidence.has_rows = HasVisibleRow(rel);
	table_close(rel, AccessShareLock);
	*rows = core::DefaultPartitionRows(evidence);
	return true;
}

}  // namespace pgmq::pg
