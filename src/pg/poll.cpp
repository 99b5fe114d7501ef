// src/pg/poll.cpp
// The *_with_poll loop (see poll.hpp). Each attempt is a new statement with a
// fresh snapshot, so messages committed during the wait are seen.
#include "pgmq/core/arguments.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/poll.hpp"
#include "pgmq/pg/wakeup.hpp"

namespace pgmq::pg {

void PollForMessages(FunctionCallInfo fcinfo, const QueueRef &queue, ReadAttempt attempt, const void *request)
{
	core::PollSchedule schedule;
	RequireArgument(fcinfo, 3, "max_poll_seconds");
	RequireArgument(fcinfo, 4, "poll_interval_ms");
	const int32 max_poll_seconds = PG_GETARG_INT32(3);
	const int32 poll_interval_ms = PG_GETARG_INT32(4);
	RunCore([&] { schedule = core::MakePollSchedule(GetCurrentTimestamp(), max_poll_seconds, poll_interval_ms); });
	// Registered before the first attempt: a send committed after an attempt's
	// snapshot sets the latch, so the next wait returns at once.
	StartWaiting(queue);
	for (;;) {
		if (attempt(request) > 0) {
			EmitRows(fcinfo);
			break;
		}
		SPI_freetuptable(SPI_tuptable);
		const long wait_ms = core::NextPollWaitMs(schedule, GetCurrentTimestamp());
		if (wait_ms < 0)
			break;
		WaitForMessages(wait_ms);
	}
	StopWaiting();
}

}  // namespace pgmq::pg
