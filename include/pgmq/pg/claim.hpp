// include/pgmq/pg/claim.hpp
// The one claim path of every read that hides messages for vt seconds:
// read, read_with_poll and the FIFO group reads (read_grouped*, with and
// without _with_poll). An entry point decodes its arguments into a
// ClaimRequest once; Claim runs the statement once or, with a poll schedule,
// again after each wait (woken early by a committed send, see wakeup.hpp)
// until a message is claimed or the schedule's deadline has passed. A hook
// that must see every claim goes into ClaimOnce, as the dead-letter policy does.
#pragma once

#include "pgmq/core/arguments.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace pgmq::pg {

// A claim's parameters, decoded once and reused by every poll attempt. The
// statement takes ($1 now, $2 visible again at, $3 qty) and, when it has a
// condition, ($4 the jsonb condition).
struct ClaimRequest {
	QueueRef queue;
	core::Statement statement;
	int32 vt_seconds;
	int64 qty;
	Jsonb *condition;             // nullptr: the statement takes no condition
	// Set by ClaimAttempt from the queue's policy (policy_cache.hpp): claim
	// with the statement's dead-letter claim, which also moves the rows
	// delivered max_deliveries times to the dead-letter queue, naming
	// queue_name (text).
	bool dead_letter;
	int64 max_deliveries;
	Datum queue_name;
	bool paused;                  // pgmq.pause: claim nothing (read again at each poll attempt)
	bool priority;                // set_priority: claim with core::PriorityClaimOf(statement)
	bool policy_loaded;           // the fields above are set (by ClaimAttempt)
	bool poll;                    // false: one attempt
	core::PollSchedule schedule;  // when poll
};

// Decodes (queue_name, vt, qty) at arguments 0..2 and sets statement; no
// condition, no poll. May ereport.
void DecodeClaim(FunctionCallInfo fcinfo, core::Statement statement, ClaimRequest *request);

// Decodes (max_poll_seconds, poll_interval_ms) at the given arguments into a
// schedule that starts now, and sets poll. May ereport.
void DecodePollSchedule(FunctionCallInfo fcinfo, int max_poll_seconds_argno, int poll_interval_ms_argno,
                        ClaimRequest *request);

// Runs the claim (once, or polling), appending the claimed rows to the
// function's materialized result after the result-type check (EmitRows).
// Call after BeginRowsResult and the decoding; connects and finishes SPI
// itself. May ereport.
void Claim(FunctionCallInfo fcinfo, const ClaimRequest &request);

// For a claim over several queues (read_multi): one attempt of a decoded
// request, the queue's policy applied first; the rows it claimed are in
// SPI_tuptable (NULL when the queue is paused). Requires SPI. May ereport.
uint64 ClaimAttempt(ClaimRequest *request);

// Calls attempt(context) until it returns true or the schedule ends,
// waiting between calls until a send to one of the count queues commits or
// the poll interval passes (core::PollPacer). Requires SPI. May ereport.
void PollUntilClaimed(const core::PollSchedule &schedule, const QueueRef *queues, int count,
                      bool (*attempt)(void *context), void *context);

}  // namespace pgmq::pg
