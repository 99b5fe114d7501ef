// src/pg/deduplication.cpp
// Sends with a deduplication policy (see deduplication.hpp). One statement
// does the send (core/statements.hpp, SendDeduplicated): a duplicate of a
// committed (or this transaction's) id inserts nothing. Only a send that
// raced another transaction's first send of an id, and waited for it to
// commit, has inserted a message it must take back: that rare path deletes
// it again and returns the first send's msg_id (core::DeduplicatedResolveSql),
// as the queue table's owner under SECURITY_RESTRICTED_OPERATION, because a
// sender need not have DELETE on the queue. What it deletes is only what this
// statement inserted (the msg_ids its INSERT returned).
#include "pgmq/core/policy.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/deduplication.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/plan_cache.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

namespace pgmq::pg {

namespace {

// The rest of the values of a deduplicated send: ($4 queue name, $5 now,
// $6 expires at = now + window, $7 the queue table).
void PolicyValues(const QueueRef &queue, const QueuePolicy &policy, Datum *values)
{
	const TimestampTz now = GetCurrentTimestamp();
	values[3] = CStringGetTextDatum(policy.queue_name);
	values[4] = TimestampTzGetDatum(now);
	values[5] = DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(now),
	                                IntervalPGetDatum(&policy.deduplication_window));
	values[6] = ObjectIdGetDatum(queue.queue_relid);
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

// The raced path: deletes the messages `drop` (inserted by this send) and
// emits every element's msg_id (count elements; ids may hold NULLs).
void Resolve(FunctionCallInfo fcinfo, const QueueRef &queue, Datum queue_name, Datum *drop, int ndrop, Datum *msg_ids,
             Datum *ids, bool *id_nulls, int count)
{
	int dims[1] = {count};
	int lbs[1] = {1};
	Oid types[5] = {INT8ARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TEXTOID, REGCLASSOID};
	Datum values[5] = {
		PointerGetDatum(construct_array(drop, ndrop, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
		PointerGetDatum(construct_array(msg_ids, count, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
		PointerGetDatum(construct_md_array(ids, id_nulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT)), queue_name,
		ObjectIdGetDatum(queue.queue_relid)};
	const char *queue_table = queue.queue_table;
	uint64 rows = 0;
	const Oid owner = RelationOwner(queue.queue_relid);
	if (!OidIsValid(owner))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("pgmq: relation %u disappeared", queue.queue_relid)));
	AsOwner(owner, [&] {
		RunCore([&] { rows = ExecuteOnce(core::DeduplicatedResolveSql(queue_table), 5, types, values); });
	});
	for (uint64 i = 0; i < rows; i++)
		EmitMsgId(fcinfo, MsgIdOf(i, queue));
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
	Datum values[7] = {send_values[0], send_values[1], send_values[2]};
	const char nulls[7] = {send_nulls[0], send_nulls[1], send_nulls[2], ' ', ' ', ' ', ' '};
	PolicyValues(queue, policy, values);
	ExecutePlan(PlanFor(queue, core::Statement::SendDeduplicated), values, nulls);
	Datum msg_id = MsgIdOf(0, queue);
	// New, or the first sender's (lower): either bounds the queue's head.
	NoteFirstSentId(queue.queue_relid, DatumGetInt64(msg_id));
	bool isnull = true;
	if (!DatumGetBool(ResultValue(0, 2, BOOLOID, &isnull))) {
		EmitMsgId(fcinfo, msg_id);
		return;
	}
	// The id as the statement read it (->>).
	bool id_null = true;
	Datum id = ResultValue(0, 3, TEXTOID, &id_null);
	Resolve(fcinfo, queue, values[3], &msg_id, 1, &msg_id, &id, &id_null, 1);
}

void SendBatchDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy,
                           Datum *batch_values, const char *batch_nulls)
{
	Datum values[7] = {batch_values[0], batch_values[1], batch_values[2]};
	const char nulls[7] = {batch_nulls[0], batch_nulls[1], batch_nulls[2], ' ', ' ', ' ', ' '};
	PolicyValues(queue, policy, values);
	const uint64 count = ExecutePlan(PlanFor(queue, core::Statement::SendBatchDeduplicated), values, nulls);
	// The first element's id is the batch's lowest new one, or an older one.
	if (count > 0)
		NoteFirstSentId(queue.queue_relid, DatumGetInt64(MsgIdOf(0, queue)));
	bool raced = false;
	for (uint64 i = 0; i < count && !raced; i++) {
		bool isnull = true;
		raced = DatumGetBool(ResultValue(i, 2, BOOLOID, &isnull));
	}
	if (!raced) {
		for (uint64 i = 0; i < count; i++)
			EmitMsgId(fcinfo, MsgIdOf(i, queue));
		return;
	}
	auto *drop = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *msg_ids = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *ids = static_cast<Datum *>(palloc(sizeof(Datum) * count));
	auto *id_nulls = static_cast<bool *>(palloc(sizeof(bool) * count));
	int ndrop = 0;
	for (uint64 i = 0; i < count; i++) {
		bool isnull = true;
		msg_ids[i] = MsgIdOf(i, queue);
		if (DatumGetBool(ResultValue(i, 2, BOOLOID, &isnull)))
			drop[ndrop++] = msg_ids[i];
		ids[i] = ResultValue(i, 3, TEXTOID, &id_nulls[i]);
	}
	Resolve(fcinfo, queue, values[3], drop, ndrop, msg_ids, ids, id_nulls, static_cast<int>(count));
}

}  // namespace pgmq::pg
