// src/pg/entry_policy_state.cpp
// What a queue's policies do now: list_policies (every queue's policies,
// with its dead-lettered count), queue_state and queue_state_all (paused,
// priorities, dead letters, and the visible / leased / delayed split that
// upstream's metrics does not have).
#include "pgmq/core/policy.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// The number of queue_name's messages waiting in dead-letter queue
// `table` (relid), into *count; NULL when the caller may not read it. A
// dead-letter queue whose table is not what pgmq makes costs its count
// only (a WARNING), never the whole list. Requires SPI.
void DeadLetteredCount(Datum queue_name, Oid relid, const char *table, Datum *count, bool *isnull)
{
	*isnull = true;
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return;
	Datum counted = Datum(0);
	bool counted_null = true;
	ErrorData *error = InSubtransaction([&] {
		VerifyTableShape(relid, table, TableRole::Queue, AccessShareLock);
		Oid types[1] = {TEXTOID};
		Datum values[1] = {queue_name};
		RunCore([&] { ExecuteOnce(core::DeadLetteredCountSql(table), 1, types, values); });
		counted = ResultValue(0, 1, INT8OID, &counted_null);
	});
	if (error) {
		ereport(WARNING, (errcode(error->sqlerrcode),
		                  errmsg("no dead-letter count for queue \"%s\": %s", TextDatumGetCString(queue_name),
		                         error->message)));
		return;
	}
	*count = counted;
	*isnull = counted_null;
}


// The visible, leased and delayed counts of a queue into values[0..2]
// (NULL when the caller may not read its table; a table that is not what
// pgmq makes costs its counts only, with a WARNING). Requires SPI.
void StateCounts(const QueueRef &queue, Datum *values, bool *nulls)
{
	nulls[0] = nulls[1] = nulls[2] = true;
	if (pg_class_aclcheck(queue.queue_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return;
	Datum counts[3];
	bool counts_null[3];
	ErrorData *error = InSubtransaction([&] {
		const Datum now = TimestampTzGetDatum(GetCurrentTimestamp());
		const char arg_nulls[1] = {' '};
		Datum args[1] = {now};
		ExecutePlan(PlanFor(queue, core::Statement::QueueState), args, arg_nulls);
		for (int c = 0; c < 3; c++)
			counts[c] = ResultValue(0, c + 1, INT8OID, &counts_null[c]);
	});
	if (error) {
		ereport(WARNING, (errcode(error->sqlerrcode),
		                  errmsg("no message counts for queue \"%.*s\": %s", queue.name_len, queue.name, error->message)));
		return;
	}
	for (int c = 0; c < 3; c++)
		values[c] = counts[c], nulls[c] = counts_null[c];
}

// One queue_state row per queue of pgmq.meta, or only `one`'s (read
// without pgmq.meta), into the function's result.
void QueueStates(FunctionCallInfo fcinfo, const QueueRef *one)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	uint64 rows = 0;
	if (one) {
		Oid types[2] = {TEXTOID, OIDOID};
		Datum args[2] = {QueueNameAsCreated(*one), ObjectIdGetDatum(one->queue_relid)};
		RunCore([&] { rows = ExecuteOnce(core::QueueStateSql(), 2, types, args); });
	} else {
		RunCore([&] { rows = ExecuteOnce(core::QueueStatesSql(), 0, nullptr, nullptr); });
	}
	SPITupleTable *states = SPI_tuptable;
	constexpr int kColumns = 7;
	const Oid column_types[kColumns] = {TEXTOID, TIMESTAMPTZOID, INT4OID, TEXTOID, OIDOID, OIDOID, TEXTARRAYOID};
	for (int c = 0; c < kColumns; c++)
		RequireColumnType(states->tupdesc, c + 1, column_types[c], "meta");
	for (uint64 i = 0; i < rows; i++) {
		Datum row[kColumns];
		bool row_nulls[kColumns];
		for (int c = 0; c < kColumns; c++)
			row[c] = SPI_getbinval(states->vals[i], states->tupdesc, c + 1, &row_nulls[c]);
		QueueRef queue;
		if (!FindQueueQuietly(DatumGetTextPP(row[0]), &queue))
			continue;  // a meta row without its table
		// A policy row written for a dropped table of the same name is no policy.
		const bool policy = !row_nulls[4] && DatumGetObjectId(row[4]) == queue.queue_relid;
		constexpr int kResult = 10;
		Datum values[kResult];
		bool nulls[kResult];
		values[0] = row[0], nulls[0] = false;
		values[1] = BoolGetDatum(policy && !row_nulls[1]), nulls[1] = false;  // paused
		values[2] = row[1], nulls[2] = !policy || row_nulls[1];                // paused_at
		values[3] = row[2], nulls[3] = !policy || row_nulls[2];                // priority_levels
		values[4] = row[3], nulls[4] = !policy || row_nulls[3];                // dead_letter_queue
		values[5] = Datum(0), nulls[5] = true;                                 // dead_lettered
		QueueRef dead_letter;
		if (!nulls[4] && !row_nulls[5] && FindQueueQuietly(DatumGetTextPP(row[3]), &dead_letter) &&
		    dead_letter.queue_relid == DatumGetObjectId(row[5]))
			DeadLetteredCount(row[0], dead_letter.queue_relid, dead_letter.queue_table, &values[5], &nulls[5]);
		values[6] = row[6], nulls[6] = row_nulls[6];  // dead_letter_for
		StateCounts(queue, &values[7], &nulls[7]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

}  // namespace


// list_policies() -> every queue's policies, and how many of its messages
// wait in its dead-letter queue (NULL when the caller may not read it).
// Rows a dropped table left behind (pinned to another table than the
// queue's current one) are not listed.
PGMQ_FUNCTION(pgmq_list_policies)
{
	BeginRowsResult(fcinfo);
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	SpiConnect();
	uint64 rows = 0;
	RunCore([&] { rows = ExecuteOnce(core::ListPoliciesSql()); });
	SPITupleTable *policies = SPI_tuptable;
	constexpr int kColumns = 11;
	const Oid types[kColumns] = {TEXTOID,     TEXTOID,     INT4OID, INT4OID, INT4OID, INTERVALOID,
	                             INTERVALOID, INTERVALOID, OIDOID,  OIDOID,  INT4OID};
	for (int c = 0; c < kColumns; c++)
		RequireColumnType(policies->tupdesc, c + 1, types[c], "policies");
	for (uint64 i = 0; i < rows; i++) {
		Datum row[kColumns];
		bool row_nulls[kColumns];
		for (int c = 0; c < kColumns; c++)
			row[c] = SPI_getbinval(policies->vals[i], policies->tupdesc, c + 1, &row_nulls[c]);
		QueueRef queue;
		if (!FindQueueQuietly(DatumGetTextPP(row[0]), &queue) || queue.queue_relid != DatumGetObjectId(row[8]))
			continue;
		Datum values[10];
		bool nulls[10];
		values[0] = row[0], nulls[0] = row_nulls[0];
		values[1] = row[1], nulls[1] = row_nulls[1];
		values[2] = row[2], nulls[2] = row_nulls[2];
		values[3] = Datum(0), nulls[3] = true;
		for (int c = 3; c < 8; c++)
			values[c + 1] = row[c], nulls[c + 1] = row_nulls[c];
		values[9] = row[10], nulls[9] = row_nulls[10];
		QueueRef dead_letter;
		if (!row_nulls[1] && !row_nulls[9] && FindQueueQuietly(DatumGetTextPP(row[1]), &dead_letter) &&
		    dead_letter.queue_relid == DatumGetObjectId(row[9]))
			DeadLetteredCount(row[0], dead_letter.queue_relid, dead_letter.queue_table, &values[3], &nulls[3]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SpiFinish();
	return Datum(0);
}

// queue_state(queue_name text) -> TABLE(queue_name text, paused boolean,
// paused_at timestamptz, priority_levels integer, dead_letter_queue text,
// dead_lettered bigint, dead_letter_for text[], visible_length bigint,
// leased_length bigint, delayed_length bigint): one row.
PGMQ_FUNCTION(pgmq_queue_state)
{
	QueueRef queue;
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	SpiConnect();
	QueueStates(fcinfo, &queue);
	SpiFinish();
	return Datum(0);
}

// queue_state_all() -> the same, a row per queue, by name.
PGMQ_FUNCTION(pgmq_queue_state_all)
{
	BeginRowsResult(fcinfo);
	SpiConnect();
	QueueStates(fcinfo, nullptr);
	SpiFinish();
	return Datum(0);
}
