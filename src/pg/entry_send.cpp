// src/pg/entry_send.cpp
// send and send_batch, every overload: insert messages with a visibility
// time, return their msg_ids. A message is a jsonb payload plus optional
// jsonb headers; vt is the time it becomes visible to readers.
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/deduplication.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/priority.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/stream_result.hpp"
#include "pgmq/pg/wakeup.hpp"

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// A stream delivers in commit order: a send to it takes no delay. ERROR
// 0A000 when vt (SendVisibleAt) is later than now.
void RefuseDelayedStreamSend(const QueueRef &queue, TimestampTz vt, TimestampTz now)
{
	if (vt > now && IsStreamTable(queue.queue_relid))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("\"%.*s\" is a stream: a send to it takes no delay", queue.name_len, queue.name),
		                errdetail("A stream delivers its messages to every consumer group in commit order."),
		                errhint("Send without a delay, or delay in the consumer.")));
}

// Shared body of the six send overloads: (queue, msg, [headers], [delay]).
Datum Send(FunctionCallInfo fcinfo, const SendArgs &args)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	const bool headers_null = args.headers < 0 || PG_ARGISNULL(args.headers);
	const TimestampTz vt = SendVisibleAt(fcinfo, args);
	RefuseDelayedStreamSend(queue, vt, GetCurrentTimestamp());
	Datum values[3] = {PG_GETARG_DATUM(1), headers_null ? Datum(0) : PG_GETARG_DATUM(args.headers),
	                   TimestampTzGetDatum(vt)};
	const char nulls[3] = {NullFlag(PG_ARGISNULL(1)), NullFlag(headers_null), ' '};
	SpiConnect();
	// Announced before the insert takes an id (head_hint.hpp).
	BeginSend(queue.queue_relid);
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	if (policy.priority_levels > 0 && !headers_null)
		CheckPriorityHeader(DatumGetJsonbP(values[1]), policy.priority_levels);
	if (policy.deduplication && !headers_null && HasDeduplicationId(DatumGetJsonbP(values[1]))) {
		SendDeduplicated(fcinfo, queue, policy, values, nulls);
	} else {
		const bool sent = ExecutePlan(PlanFor(queue, core::Statement::Send), values, nulls) == 1;
		EmitRows(fcinfo);  // checks that the row is a bigint
		if (sent) {
			bool isnull;
			const Datum msg_id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
			if (!isnull)
				NoteFirstSentId(queue.queue_relid, DatumGetInt64(msg_id));
		}
	}
	EndSend();
	NoteMessagesSent(queue);
	SpiFinish();
	return Datum(0);
}

// Shared body of the six send_batch overloads: (queue, msgs, [headers], [delay]).
Datum SendBatch(FunctionCallInfo fcinfo, const SendArgs &args)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	ArrayType *msgs = ArrayArgument(fcinfo, 1);
	ArrayType *headers = ArrayArgument(fcinfo, args.headers);
	CheckBatchArguments(msgs, headers);
	const TimestampTz vt = SendVisibleAt(fcinfo, args);
	RefuseDelayedStreamSend(queue, vt, GetCurrentTimestamp());
	Datum values[3] = {PointerGetDatum(msgs), PointerGetDatum(headers), TimestampTzGetDatum(vt)};
	const char nulls[3] = {' ', NullFlag(!headers), ' '};
	SpiConnect();
	BeginSend(queue.queue_relid);
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	if (policy.priority_levels > 0)
		CheckPriorityHeaders(headers, policy.priority_levels);
	if (policy.deduplication && headers) {
		SendBatchDeduplicated(fcinfo, queue, policy, values, nulls);
	} else {
		// Streamed into the result: a batch of any size returns its ids in
		// bounded memory.
		int64 first_id = PG_INT64_MIN;
		if (ExecutePlanIntoResult(fcinfo, PlanFor(queue, core::Statement::SendBatch), values, nulls, &first_id) > 0)
			NoteFirstSentId(queue.queue_relid, first_id);
	}
	EndSend();
	NoteMessagesSent(queue);
	SpiFinish();
	return Datum(0);
}

}  // namespace

// send(queue_name text, msg jsonb)
PGMQ_FUNCTION(pgmq_send) { return Send(fcinfo, {-1, -1, -1}); }
// send(queue_name text, msg jsonb, headers jsonb)
PGMQ_FUNCTION(pgmq_send_headers) { return Send(fcinfo, {2, -1, -1}); }
// send(queue_name text, msg jsonb, delay integer)
PGMQ_FUNCTION(pgmq_send_delay) { return Send(fcinfo, {-1, 2, -1}); }
// send(queue_name text, msg jsonb, delay timestamptz)
PGMQ_FUNCTION(pgmq_send_at) { return Send(fcinfo, {-1, -1, 2}); }
// send(queue_name text, msg jsonb, headers jsonb, delay integer)
PGMQ_FUNCTION(pgmq_send_headers_delay) { return Send(fcinfo, {2, 3, -1}); }
// send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
PGMQ_FUNCTION(pgmq_send_headers_at) { return Send(fcinfo, {2, -1, 3}); }

// send_batch(queue_name text, msgs jsonb[])
PGMQ_FUNCTION(pgmq_send_batch) { return SendBatch(fcinfo, {-1, -1, -1}); }
// send_batch(queue_name text, msgs jsonb[], headers jsonb[])
PGMQ_FUNCTION(pgmq_send_batch_headers) { return SendBatch(fcinfo, {2, -1, -1}); }
// send_batch(queue_name text, msgs jsonb[], delay integer)
PGMQ_FUNCTION(pgmq_send_batch_delay) { return SendBatch(fcinfo, {-1, 2, -1}); }
// send_batch(queue_name text, msgs jsonb[], delay timestamptz)
PGMQ_FUNCTION(pgmq_send_batch_at) { return SendBatch(fcinfo, {-1, -1, 2}); }
// send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
PGMQ_FUNCTION(pgmq_send_batch_headers_delay) { return SendBatch(fcinfo, {2, 3, -1}); }
// send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz)
PGMQ_FUNCTION(pgmq_send_batch_headers_at) { return SendBatch(fcinfo, {2, -1, 3}); }
