// src/pg/poll.cpp
// The *_with_poll loop (see poll.hpp). Each attempt is a new statement with a
// fresh snapshot, so messages committed during the wait are seen. When to
// read again is core::PollPacer's rule: at once on a wake-up, but at most once
// per interval while wake-ups keep finding nothing.
#include "pgmq/core/poll_pacing.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/poll.hpp"
#include "pgmq/pg/wakeup.hpp"

namespace pgmq::pg {

void PollForMessages(FunctionCallInfo fcinfo, const QueueRef &queue, ReadAttempt attempt, const void *request)
{
	core::PollPacer pacer;
	RequireArgument(fcinfo, 3, "max_poll_seconds");
	RequireArgument(fcinfo, 4, "poll_interval_ms");
	const int32 max_poll_seconds = PG_GETARG_INT32(3);
	const int32 poll_interval_ms = PG_GETARG_INT32(4);
	RunCore([&] { pacer.schedule = core::MakePollSchedule(GetCurrentTimestamp(), max_poll_seconds, poll_interval_ms); });
	// Registered before the first attempt: a send committed after an attempt's
	// snapshot sets the latch, so the next wait returns at once. A latch set
	// before (for another reason) is not a send this poll could miss.
	ForgetWakeups();
	StartWaiting(queue);
	for (;;) {
		if (attempt(request) > 0) {
			EmitRows(fcinfo);
			break;
		}
		SPI_freetuptable(SPI_tuptable);
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

}  // namespace pgmq::pg
