// src/pg/claim.cpp
// The claim path (see claim.hpp). A poll's attempts are each a new statement
// with a fresh snapshot, so messages committed during the wait are seen.
// When to read again is core::PollPacer's rule: at once on a wake-up, but at
// most once per interval while wake-ups keep finding nothing.
#include "pgmq/core/poll_pacing.hpp"

#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace pgmq::pg {

namespace {

// One attempt; returns the rows claimed, which are in SPI_tuptable.
// Requires SPI.
uint64 ClaimOnce(const ClaimRequest &request, TimestampTz now)
{
	if (request.paused) {
		SPI_tuptable = nullptr;  // nothing to free or emit
		SPI_processed = 0;
		return 0;
	}
	const bool conditional = request.condition != nullptr;
	// Only read and the conditional read start at the queue's head; a read
	// by priority scans the priority index, where the head saves nothing.
	const bool from_head = !request.priority && (request.statement == core::Statement::Read ||
	                                             request.statement == core::Statement::ReadConditional);
	const core::Statement statement = request.priority ? core::PriorityClaimOf(request.statement) : request.statement;
	const Datum head = Int64GetDatum(from_head ? ScanStart(request.queue, now) : PG_INT64_MIN);
	// read: ($1 now, $2 vt, $3 qty, $4 head); conditional: ($4 condition,
	// $5 head); FIFO reads take the first three.
	Datum values[7] = {TimestampTzGetDatum(now), TimestampTzGetDatum(SecondsFromNow(now, request.vt_seconds)),
	                   Int64GetDatum(request.qty), conditional ? PointerGetDatum(request.condition) : head, head};
	const char nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	if (!request.dead_letter)
		return ExecutePlan(PlanFor(request.queue, statement), values, nulls);
	// A queue with a dead-letter policy claims with the statement that also
	// moves the rows at the delivery limit: ($4 max deliveries, $5 queue
	// name[, $6 condition], head last; grouped reads take five).
	values[3] = Int64GetDatum(request.max_deliveries);
	values[4] = request.queue_name;
	values[5] = conditional ? PointerGetDatum(request.condition) : head;
	values[6] = head;
	Oid dead_letter_relid;
	SPIPlanPtr plan = DeadLetterPlan(request.queue, core::DeadLetterClaimOf(statement), &dead_letter_relid);
	// The move inserts into the dead-letter queue: announced as a send there.
	BeginSend(dead_letter_relid);
	const uint64 claimed = ExecutePlan(plan, values, nulls);
	EndSend();
	return claimed;
}

// Fills the request's pause, priority and dead-letter fields from the
// queue's policy (read again when fresh). Requires SPI.
void ApplyPolicy(ClaimRequest *request, bool fresh = false)
{
	QueuePolicy policy;
	if (fresh)
		ReloadPolicy(request->queue, &policy);
	else
		LoadPolicy(request->queue, &policy);
	request->paused = policy.paused;
	request->priority = policy.priority_levels > 0;
	request->dead_letter = policy.dead_letter && core::DeadLetterClaimOf(request->statement) != core::Statement::Count;
	if (!request->dead_letter)
		return;
	request->max_deliveries = policy.max_deliveries;
	request->queue_name = CStringGetTextDatum(policy.queue_name);
}

// One queue's poll attempt: claims, and emits what it claimed.
struct SingleQueue {
	FunctionCallInfo fcinfo;
	ClaimRequest *request;
};

bool ClaimAndEmit(void *context)
{
	auto *single = static_cast<SingleQueue *>(context);
	if (ClaimAttempt(single->request) == 0) {
		SPI_freetuptable(SPI_tuptable);
		return false;
	}
	EmitRows(single->fcinfo, single->request->queue.queue_table);
	return true;
}

}  // namespace

uint64 ClaimAttempt(ClaimRequest *request)
{
	// A resume wakes a poll when it commits, before its invalidation
	// arrives: while paused, each attempt reads the policy row again.
	if (!request->policy_loaded || request->paused)
		ApplyPolicy(request, request->policy_loaded);
	request->policy_loaded = true;
	return ClaimOnce(*request, GetCurrentTimestamp());
}

void PollUntilClaimed(const core::PollSchedule &schedule, const QueueRef *queues, int count,
                      bool (*attempt)(void *context), void *context)
{
	core::PollPacer pacer;
	pacer.schedule = schedule;
	// Registered before the first attempt: a send committed after an attempt's
	// snapshot sets the latch, so the next wait returns at once. A latch set
	// before (for another reason) is not a send this poll could miss.
	ForgetWakeups();
	StartWaiting(queues, count);
	for (;;) {
		if (attempt(context))
			break;
		core::AfterEmptyRead(pacer, GetCurrentTimestamp());
		long step;
		while ((step = core::NextPollStep(pacer, GetCurrentTimestamp())) > 0)
			if (WaitForMessages(step))
				core::NoteWoken(pacer);
		if (step < 0)
			break;
	}
	StopWaiting();
}

void DecodeClaim(FunctionCallInfo fcinfo, core::Statement statement, ClaimRequest *request)
{
	ResolveQueue(fcinfo, 0, &request->queue);
	RefuseStream(request->queue);
	RequireArgument(fcinfo, 1, "vt");
	RequireArgument(fcinfo, 2, "qty");
	request->statement = statement;
	request->vt_seconds = PG_GETARG_INT32(1);
	request->qty = PG_GETARG_INT32(2);
	RunCore([request] { core::CheckQuantity(request->qty); });
	request->condition = nullptr;
	request->dead_letter = false;
	request->max_deliveries = 0;
	request->queue_name = Datum(0);
	request->paused = false;
	request->priority = false;
	request->policy_loaded = false;
	request->poll = false;
	request->schedule = core::PollSchedule{};
}

void DecodePollSchedule(FunctionCallInfo fcinfo, int max_poll_seconds_argno, int poll_interval_ms_argno,
                        ClaimRequest *request)
{
	RequireArgument(fcinfo, max_poll_seconds_argno, "max_poll_seconds");
	RequireArgument(fcinfo, poll_interval_ms_argno, "poll_interval_ms");
	const int32 max_poll_seconds = PG_GETARG_INT32(max_poll_seconds_argno);
	const int32 poll_interval_ms = PG_GETARG_INT32(poll_interval_ms_argno);
	RunCore([&] {
		request->schedule = core::MakePollSchedule(GetCurrentTimestamp(), max_poll_seconds, poll_interval_ms);
	});
	request->poll = true;
}

void Claim(FunctionCallInfo fcinfo, const ClaimRequest &decoded)
{
	SpiConnect();
	ClaimRequest request = decoded;
	SingleQueue single = {fcinfo, &request};
	if (request.poll)
		PollUntilClaimed(request.schedule, &request.queue, 1, ClaimAndEmit, &single);
	else
		ClaimAndEmit(&single);
	SpiFinish();
}

}  // namespace pgmq::pg
