// src/pg/deduplication.cpp
// Sends with a deduplication policy (see deduplication.hpp). The common case,
// an id not seen within the window, is one statement that inserts the
// message and the id's row. A duplicate (also one that waited for a racing
// first send to commit) inserted its message too: a second statement
// deletes it again and returns the first send's msg_id.
#include "pgmq/core/policy.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/deduplication.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

namespace pgmq::pg {

namespace {

// The rest of the values of a deduplicated send: ($4 queue name, $5 now,
// $6 expires at = now + window).
void PolicyValues(const QueuePolicy &policy, Datum *values)
{
	const TimestampTz now = GetCurrentTimestamp();
	values[3] = CStringGetTextDatum(policy.queue_name);
	values[4] = TimestampTzGetDatum(now);
	values[5] = DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(now),
	                                IntervalPGetDatum(&policy.deduplication_window));
}

void EmitMsgId(FunctionCallInfo fcinfo, Datum msg_id)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	RequireColumnType(rsinfo->setDesc, 1, INT8OID, nullptr);
	bool isnull = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &msg_id, &isnull);
}

// Emits column 1 (msg_id) of every row of the last result.
void EmitMsgIds(FunctionCallInfo fcinfo, const char *table)
{
	for (uint64 i = 0; i < SPI_processed; i++) {
		bool isnull = true;
		const Datum msg_id = ResultValue(i, 1, INT8OID, &isnull, table);
		if (isnull)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq send returned no msg_id")));
		EmitMsgId(fcinfo, msg_id);
	}
}

// Runs DeduplicatedResolve: deletes the messages of the elements that were
// duplicates and emits each element's msg_id. The arrays are of count
// elements; dedup_ids may hold NULLs.
void Resolve(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy, Datum *drop, int ndrop,
             Datum *msg_ids, Datum *dedup_ids, bool *dedup_nulls, int count)
{
	int dims[1] = {count};
	int lbs[1] = {1};
	Datum values[4] = {
		PointerGetDatum(construct_array(drop, ndrop, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
		PointerGetDatum(construct_array(msg_ids, count, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
		PointerGetDatum(construct_md_array(dedup_ids, dedup_nulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT)),
		CStringGetTextDatum(policy.queue_name)};
	const char nulls[4] = {' ', ' ', ' ', ' '};
	ExecutePlan(PlanFor(queue, core::Statement::DeduplicatedResolve), values, nulls);
	EmitMsgIds(fcinfo, queue.queue_table);
}

}  // namespace

bool HasDeduplicationId(Jsonb *headers)
{
	if (!headers || !JB_ROOT_IS_OBJECT(headers))
		return false;
	JsonbValue key;
	key.type = jbvString;
	key.val.string.val = const_cast<char *>(core::kDeduplicationHeader);
	key.val.string.len = static_cast<int>(strlen(core::kDeduplicationHeader));
	JsonbValue *value = findJsonbValueFromContainer(&headers->root, JB_FOBJECT, &key);
	return value != nullptr && value->type != jbvNull;
}

void SendDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy, Datum *send_values,
                      const char *send_nulls)
{
	Datum values[6] = {send_values[0], send_values[1], send_values[2]};
	const char nulls[6] = {send_nulls[0], send_nulls[1], send_nulls[2], ' ', ' ', ' '};
	PolicyValues(policy, values);
	ExecutePlan(PlanFor(queue, core::Statement::SendDeduplicated), values, nulls);
	bool isnull = true;
	Datum msg_id = ResultValue(0, 1, INT8OID, &isnull, queue.queue_table);
	const bool kept = DatumGetBool(ResultValue(0, 2, BOOLOID, &isnull));
	if (kept) {
		EmitMsgId(fcinfo, msg_id);
		return;
	}
	// The id as the statement read it (->>).
	bool id_null = true;
	Datum id = ResultValue(0, 3, TEXTOID, &id_null);
	Resolve(fcinfo, queue, policy, &msg_id, 1, &msg_id, &id, &id_null, 1);
}

void SendBatchDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy,
                           Datum *batch_values, const char *batch_nulls)
{
	Datum values[6] = {batch_values[0], batch_values[1], batch_values[2]};
	const char nulls[6] = {batch_nulls[0], batch_nulls[1], batch_nulls[2], ' ', ' ', ' '};
	PolicyValues(policy, values);
	const uint64 count = ExecutePlan(PlanFor(queue, core::Statement::SendBatchDeduplicated), values, nulls);
	bool all_kept = true;
	for (uint64 i = 0; i < count && all_kept; i++) {
		bool isnull = true;
		all_kept = DatumGetBool(ResultValue(i, 2, BOOLOID, &isnull));
	}
	if (all_kept) {
		EmitMsgIds(fcinfo, queue.queue_table);
		return;
	}
	auto *drop = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *msg_ids = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *dedup_ids = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *dedup_nulls = static_cast<bool *>(palloc(sizeof(bool) * count));
	int ndrop = 0;
	for (uint64 i = 0; i < count; i++) {
		bool isnull = true;
		msg_ids[i] = ResultValue(i, 1, INT8OID, &isnull, queue.queue_table);
		if (!DatumGetBool(ResultValue(i, 2, BOOLOID, &isnull)))
			drop[ndrop++] = msg_ids[i];
		dedup_ids[i] = ResultValue(i, 3, TEXTOID, &dedup_nulls[i]);
	}
	Resolve(fcinfo, queue, policy, drop, ndrop, msg_ids, dedup_ids, dedup_nulls, static_cast<int>(count));
}

}  // namespace pgmq::pg
