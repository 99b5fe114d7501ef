// src/core/poll_pacing.cpp
// When a *_with_poll waiter reads again (see poll_pacing.hpp).
#include "pgmq/core/poll_pacing.hpp"

#include <algorithm>

namespace pgmq::core {

void AfterEmptyRead(PollPacer &pacer, int64_t now_us) noexcept
{
	pacer.last_read_us = now_us;
	pacer.holding = pacer.woken;
	pacer.woken = false;
}

long NextPollStep(const PollPacer &pacer, int64_t now_us) noexcept
{
	const PollSchedule &schedule = pacer.schedule;
	if (pacer.last_read_us >= schedule.deadline_us)
		return -1;
	if (pacer.woken && !pacer.holding)
		return 0;
	// The interval is at least 1 ms (MakePollSchedule), and both times are
	// real clock readings: no overflow.
	const int64_t next_read_us = std::min(pacer.last_read_us + schedule.interval_us, schedule.deadline_us);
	if (now_us >= next_read_us)
		return 0;
	return static_cast<long>((next_read_us - now_us + 999) / 1000);  // round up: never early
}

}  // namespace pgmq::core
