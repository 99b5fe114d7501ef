// src/core/arguments.cpp
// Argument rules (see arguments.hpp). May throw CoreError.
#include "pgmq/core/arguments.hpp"

#include <algorithm>
#include <string>

#include "pgmq/core/error.hpp"

namespace pgmq::core {

void CheckQuantity(int64_t qty)
{
	if (qty < 0)
		throw CoreError(ErrorKind::InvalidParameter, "qty must be non-negative, got: " + std::to_string(qty));
}

void CheckBatch(bool msgs_null, int64_t msgs_count, bool headers_null, int64_t headers_count)
{
	if (msgs_null || msgs_count == 0)
		throw CoreError(msgs_null ? ErrorKind::NullArgument : ErrorKind::InvalidParameter, "msgs cannot be NULL or empty");
	if (!headers_null && headers_count != msgs_count)
		throw CoreError(ErrorKind::InvalidParameter, "headers array length (" + std::to_string(headers_count) +
		                                                 ") must match msgs array length (" + std::to_string(msgs_count) + ")");
}

PollSchedule MakePollSchedule(int64_t now_us, int32_t max_poll_seconds, int32_t poll_interval_ms)
{
	if (poll_interval_ms < 0)
		throw CoreError(ErrorKind::InvalidParameter,
		                "poll_interval_ms must be non-negative, got: " + std::to_string(poll_interval_ms));
	const int64_t wait_us = static_cast<int64_t>(std::max<int32_t>(max_poll_seconds, 0)) * 1000000;
	return {now_us + wait_us, std::max<int64_t>(poll_interval_ms, 1) * 1000};
}

long NextPollWaitMs(const PollSchedule &schedule, int64_t now_us)
{
	if (now_us >= schedule.deadline_us)
		return -1;
	const int64_t wait_us = std::min(schedule.interval_us, schedule.deadline_us - now_us);
	return static_cast<long>((wait_us + 999) / 1000);  // round up: never wake before the deadline
}

}  // namespace pgmq::core
