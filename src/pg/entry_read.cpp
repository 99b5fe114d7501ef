// src/pg/entry_read.cpp
// read, read_with_poll and pop: claim the oldest visible messages, skipping
// rows other transactions hold (SKIP LOCKED). read hides them for vt seconds
// (at-least-once delivery); pop deletes them (at-most-once).
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/poll.hpp"

extern "C" {
#include "utils/jsonb.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// A read's parameters, decoded once and reused by every poll attempt.
struct ReadRequest {
	QueueRef queue;
	int32 vt_seconds;
	int64 qty;
	Jsonb *conditional;  // nullptr: no filter
};

// Decodes (queue_name, vt, qty, conditional) at arguments 0..2 and
// conditional_argno. May ereport.
void DecodeRead(FunctionCallInfo fcinfo, int conditional_argno, ReadRequest *request)
{
	ResolveQueue(fcinfo, 0, &request->queue);
	RequireArgument(fcinfo, 1, "vt");
	RequireArgument(fcinfo, 2, "qty");
	request->vt_seconds = PG_GETARG_INT32(1);
	request->qty = PG_GETARG_INT32(2);
	RunCore([request] { core::CheckQuantity(request->qty); });
	request->conditional = nullptr;
	if (!PG_ARGISNULL(conditional_argno)) {
		Jsonb *conditional = PG_GETARG_JSONB_P(conditional_argno);
		// '{}' means no filter, as upstream: containment of {} would still
		// exclude messages that are not objects.
		if (!(JB_ROOT_IS_OBJECT(conditional) && JB_ROOT_COUNT(conditional) == 0))
			request->conditional = conditional;
	}
}

// One read attempt; rows are in SPI_tuptable. Requires SPI.
uint64 ReadOnce(const void *untyped_request)
{
	const ReadRequest &request = *static_cast<const ReadRequest *>(untyped_request);
	const TimestampTz now = GetCurrentTimestamp();
	Datum values[4] = {TimestampTzGetDatum(now), TimestampTzGetDatum(SecondsFromNow(now, request.vt_seconds)),
	                   Int64GetDatum(request.qty), PointerGetDatum(request.conditional)};
	const char nulls[4] = {' ', ' ', ' ', ' '};
	const auto statement = request.conditional ? core::Statement::ReadConditional : core::Statement::Read;
	return ExecutePlan(PlanFor(request.queue, statement), values, nulls);
}

}  // namespace

// read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}')
PGMQ_FUNCTION(pgmq_read)
{
	ReadRequest request;
	BeginRowsResult(fcinfo);
	DecodeRead(fcinfo, 3, &request);
	SpiConnect();
	ReadOnce(&request);
	EmitRows(fcinfo, request.queue.queue_table);
	SpiFinish();
	return Datum(0);
}

// read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5,
//                poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}')
// Reads at once, then again after each wait until a message is visible or
// max_poll_seconds have passed. Each attempt takes a fresh snapshot; a
// committed send to the queue ends the wait early (see wakeup.hpp).
PGMQ_FUNCTION(pgmq_read_with_poll)
{
	ReadRequest request;
	BeginRowsResult(fcinfo);
	DecodeRead(fcinfo, 5, &request);
	SpiConnect();
	PollForMessages(fcinfo, request.queue, ReadOnce, &request);
	SpiFinish();
	return Datum(0);
}

// pop(queue_name text, qty integer DEFAULT 1): delete and return up to qty
// visible messages, as stored (read_ct not incremented).
PGMQ_FUNCTION(pgmq_pop)
{
	QueueRef queue;
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "qty");
	const int64 qty = PG_GETARG_INT32(1);
	RunCore([qty] { core::CheckQuantity(qty); });
	Datum values[2] = {TimestampTzGetDatum(GetCurrentTimestamp()), Int64GetDatum(qty)};
	const char nulls[2] = {' ', ' '};
	SpiConnect();
	ExecutePlan(PlanFor(queue, core::Statement::Pop), values, nulls);
	EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}
