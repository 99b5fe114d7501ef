// src/pg/deduplication.cpp
// Sends with a deduplication policy (see deduplication.hpp). One statement
// claims the ids (their rows in pgmq.deduplication) and inserts only the
// messages whose id it claimed, or that carry none; a second one, only when
// something was claimed, writes the new msg_ids into the claimed rows. A
// duplicate is the first statement alone and inserts nothing: senders need
// no privilege beyond a send's (core/statements.hpp, SendDeduplicated).
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

// Column 1 of row `row` of the last result: a msg_id, never NULL.
Datum MsgIdOf(uint64 row, const QueueRef &queue)
{
	bool isnull = true;
	const Datum msg_id = ResultValue(row, 1, INT8OID, &isnull, queue.queue_table);
	if (isnull)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq send to pgmq.%s returned no msg_id", queue.queue_table)));
	return msg_id;
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
	const Datum msg_id = MsgIdOf(0, queue);
	bool isnull = true;
	const bool inserted = DatumGetBool(ResultValue(0, 2, BOOLOID, &isnull));
	if (inserted) {
		// The id as the statement read it (->>).
		Datum fill[3] = {values[3], ResultValue(0, 3, TEXTOID, &isnull), msg_id};
		const char fill_nulls[3] = {' ', ' ', ' '};
		ExecutePlan(PlanFor(core::Statement::DeduplicationFill), fill, fill_nulls);
	}
	EmitMsgId(fcinfo, msg_id);
}

void SendBatchDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy,
                           Datum *batch_values, const char *batch_nulls)
{
	Datum values[6] = {batch_values[0], batch_values[1], batch_values[2]};
	const char nulls[6] = {batch_nulls[0], batch_nulls[1], batch_nulls[2], ' ', ' ', ' '};
	PolicyValues(policy, values);
	const uint64 count = ExecutePlan(PlanFor(queue, core::Statement::SendBatchDeduplicated), values, nulls);
	// The claimed ids and their new msg_ids, for the fill.
	auto *ids = static_cast<Datum *>(palloc(sizeof(Datum) * (count + 1)));
	auto *msg_ids = static_cast<Datum *>(palloc(sizeof(Datum) * (count + 1)));
	int claimed = 0;
	for (uint64 i = 0; i < count; i++) {
		const Datum msg_id = MsgIdOf(i, queue);
		bool isnull = true;
		if (DatumGetBool(ResultValue(i, 2, BOOLOID, &isnull))) {
			ids[claimed] = ResultValue(i, 3, TEXTOID, &isnull);
			msg_ids[claimed++] = msg_id;
		}
		EmitMsgId(fcinfo, msg_id);
	}
	if (claimed == 0)
		return;
	Datum fill[3] = {
		values[3],
		PointerGetDatum(construct_array(ids, claimed, TEXTOID, -1, false, TYPALIGN_INT)),
		PointerGetDatum(construct_array(msg_ids, claimed, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE))};
	const char fill_nulls[3] = {' ', ' ', ' '};
	ExecutePlan(PlanFor(core::Statement::DeduplicationFillBatch), fill, fill_nulls);
}

}  // namespace pgmq::pg
