// src/pg/entry_read.cpp
// read, read_with_poll and pop: claim the oldest visible messages, skipping
// rows other transactions hold (SKIP LOCKED). read hides them for vt seconds
// (at-least-once delivery); pop deletes them (at-most-once).
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Decodes (queue_name, vt, qty) and the conditional at argument
// conditional_argno into a claim. May ereport.
void DecodeRead(FunctionCallInfo fcinfo, int conditional_argno, ClaimRequest *request)
{
	DecodeClaim(fcinfo, core::Statement::Read, request);
	if (!PG_ARGISNULL(conditional_argno)) {
		Jsonb *conditional = PG_GETARG_JSONB_P(conditional_argno);
		// '{}' means no filter, as upstream: containment of {} would still
		// exclude messages that are not objects.
		if (!(JB_ROOT_IS_OBJECT(conditional) && JB_ROOT_COUNT(conditional) == 0)) {
			request->condition = conditional;
			request->statement = core::Statement::ReadConditional;
		}
	}
}

}  // namespace

// read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}')
PGMQ_FUNCTION(pgmq_read)
{
	ClaimRequest request;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	DecodeRead(fcinfo, 3, &request);
	Claim(fcinfo, request);
	return Datum(0);
}

// read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5,
//                poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}')
// Reads at once, then again after each wait until a message is visible or
// max_poll_seconds have passed. Each attempt takes a fresh snapshot; a
// committed send to the queue ends the wait early (see claim.hpp).
PGMQ_FUNCTION(pgmq_read_with_poll)
{
	ClaimRequest request;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	DecodeRead(fcinfo, 5, &request);
	DecodePollSchedule(fcinfo, 3, 4, &request);
	Claim(fcinfo, request);
	return Datum(0);
}

// pop(queue_name text, qty integer DEFAULT 1): delete and return up to qty
// visible messages, as stored (read_ct not incremented); none while the
// queue is paused.
PGMQ_FUNCTION(pgmq_pop)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RefuseStream(queue);
	RequireArgument(fcinfo, 1, "qty");
	const int64 qty = PG_GETARG_INT32(1);
	RunCore([qty] { core::CheckQuantity(qty); });
	const TimestampTz now = GetCurrentTimestamp();
	const char nulls[3] = {' ', ' ', ' '};
	SpiConnect();
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	if (policy.paused) {
		SpiFinish();
		return Datum(0);
	}
	// A pop by priority scans the priority index: the head saves nothing there.
	const bool priority = policy.priority_levels > 0;
	Datum values[3] = {TimestampTzGetDatum(now), Int64GetDatum(qty),
	                   Int64GetDatum(priority ? PG_INT64_MIN : ScanStart(queue, now))};
	const core::Statement statement = priority ? core::Statement::PopPriority : core::Statement::Pop;
	if (ExecutePlan(PlanFor(queue, statement), values, nulls) > 0)
		EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}
