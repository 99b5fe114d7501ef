// src/pg/entry_metrics.cpp
// metrics(queue_name): queue length, visible length, message ages, total
// messages ever sent, default_partition_length for partitioned queues:
// upstream's columns only (queue_state has this project's figures);
// metrics_all() for every queue in pgmq.meta.
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/default_partition.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/registered_queues.hpp"
#include "pgmq/pg/table_trust.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class_d.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Columns of pgmq.metrics_result; with the attributes ALTER TYPE ... DROP
// ATTRIBUTE left behind (an updated install), at most kMetricsAttributes.
constexpr int kMetricsColumns = 8;
constexpr int kMetricsAttributes = 16;

// Position in pgmq.metrics_result (0-based) of the column filled here.
constexpr int kDefaultPartitionLength = 7;

// default_partition_length: for a partitioned queue table, the rows in the
// default partitions of the queue table and of its archive; NULL otherwise.
bool DefaultPartitionLength(const QueueRef &queue, int64 *length)
{
	if (!DefaultPartitionRows(queue.queue_relid, length))
		return false;
	int64 archive_rows = 0;
	const Oid namespace_oid = get_namespace_oid("pgmq", true);
	if (OidIsValid(namespace_oid) && DefaultPartitionRows(get_relname_relid(queue.archive_table, namespace_oid), &archive_rows))
		*length = archive_rows > PG_INT64_MAX - *length ? PG_INT64_MAX : *length + archive_rows;
	return true;
}

// The metrics of a resolved queue as a tuple of result_desc, in the
// caller's memory context; name fills the queue_name column.
HeapTuple QueueMetricsTuple(const QueueRef &queue, Datum name, TupleDesc result_desc)
{
	// The positions of its live attributes: a dropped one stays in the
	// descriptor as a placeholder, always NULL.
	int live[kMetricsColumns];
	int live_count = 0;
	Datum values[kMetricsAttributes];
	bool nulls[kMetricsAttributes];
	for (int i = 0; i < result_desc->natts && i < kMetricsAttributes; i++) {
		values[i] = Datum(0);
		nulls[i] = true;
		if (!TupleDescAttr(result_desc, i)->attisdropped && live_count++ < kMetricsColumns)
			live[live_count - 1] = i;
	}
	if (live_count != kMetricsColumns || result_desc->natts > kMetricsAttributes)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq.metrics_result has %d columns, pgmq expects %d", live_count, kMetricsColumns)));
	Datum args[2] = {name, Datum(0)};
	const char arg_nulls[2] = {' ', ' '};
	MemoryContext caller_context = CurrentMemoryContext;
	SpiConnect();
	// The sequence by OID, found through pg_depend when the plan's table was
	// verified: by name it could be a tenant's view that runs code as the caller.
	Oid sequence = InvalidOid;
	SPIPlanPtr plan = PlanFor(queue, core::Statement::Metrics, &sequence);
	args[1] = ObjectIdGetDatum(sequence);
	ExecutePlan(plan, args, arg_nulls);
	RequireSequenceRead(sequence);  // after the table's own check, as before
	if (SPI_processed != 1)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("metrics query returned %lu rows",
		                                                        static_cast<unsigned long>(SPI_processed))));
	if (SPI_tuptable->tupdesc->natts != kMetricsColumns)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq result has %d columns, the function's return type has %d",
		                       SPI_tuptable->tupdesc->natts, kMetricsColumns)));
	// Every column is by-value except queue_name, which is the caller's own argument.
	for (int c = 0; c < kMetricsColumns; c++) {
		RequireColumnType(SPI_tuptable->tupdesc, c + 1, TupleDescAttr(result_desc, live[c])->atttypid, nullptr);
		values[live[c]] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, c + 1, &nulls[live[c]]);
	}
	values[live[0]] = args[0];
	int64 default_rows = 0;
	nulls[live[kDefaultPartitionLength]] = !DefaultPartitionLength(queue, &default_rows);
	values[live[kDefaultPartitionLength]] = Int64GetDatum(default_rows);
	MemoryContextSwitchTo(caller_context);
	HeapTuple tuple = heap_form_tuple(result_desc, values, nulls);
	SpiFinish();
	return tuple;
}

}  // namespace

// metrics(queue_name text) -> pgmq.metrics_result
PGMQ_FUNCTION(pgmq_metrics)
{
	QueueRef queue;
	TupleDesc result_desc;
	if (get_call_result_type(fcinfo, nullptr, &result_desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("metrics must return a composite type")));
	ResolveQueue(fcinfo, 0, &queue);
	return HeapTupleGetDatum(
		QueueMetricsTuple(queue, PointerGetDatum(PG_GETARG_TEXT_PP(0)), BlessTupleDesc(result_desc)));
}

// metrics_all() -> SETOF pgmq.metrics_result: metrics of every queue in
// pgmq.meta. In C, calling the implementation directly: SQL calling
// pgmq.metrics(queue_name) would run whatever exact-match overload a role
// with CREATE on schema pgmq added, as the (monitoring) caller. A meta row
// that is not a usable queue is skipped with a WARNING, and so is a queue
// whose table would run another role's code (table_trust.hpp), all of them
// checked in one statement: a tenant cannot fail everyone's call by
// attaching code to its own table. On a hot standby an unlogged queue is
// skipped with a NOTICE: the standby has no copy of its table, and reading
// it would fail the whole call (0A000).
PGMQ_FUNCTION(pgmq_metrics_all)
{
	BeginRowsResult(fcinfo);
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	RegisteredQueue *queues;
	const int count = ReadRegisteredQueues(&queues);
	const bool standby = RecoveryInProgress();
	Oid *relids = static_cast<Oid *>(palloc(sizeof(Oid) * Max(count, 1)));
	for (int i = 0; i < count; i++)
		relids[i] = queues[i].queue.queue_relid;
	ForeignCode *refused = static_cast<ForeignCode *>(palloc(sizeof(ForeignCode) * Max(count, 1)));
	const int nrefused = count == 0 ? 0 : CheckTables(relids, count, refused);
	for (int i = 0; i < count; i++) {
		if (standby && get_rel_persistence(queues[i].queue.queue_relid) == RELPERSISTENCE_UNLOGGED) {
			ereport(NOTICE, (errmsg("skipping unlogged queue \"%.*s\": a standby has no copy of its messages",
			                        queues[i].queue.name_len, queues[i].queue.name)));
			continue;
		}
		const ForeignCode *found = nullptr;
		for (int j = 0; j < nrefused && !found; j++)
			if (refused[j].relid == queues[i].queue.queue_relid)
				found = &refused[j];
		if (found) {
			ereport(WARNING, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                  errmsg("skipping queue \"%.*s\": queue table pgmq.%s carries %s, which %s",
			                         queues[i].queue.name_len, queues[i].queue.name,
			                         quote_identifier(queues[i].queue.queue_table), found->carrier, found->problem)));
			continue;
		}
		HeapTuple tuple = QueueMetricsTuple(queues[i].queue, PointerGetDatum(queues[i].name), rsinfo->setDesc);
		tuplestore_puttuple(rsinfo->setResult, tuple);
		heap_freetuple(tuple);
	}
	return Datum(0);
}
