// include/pgmq/core/arguments.hpp
// Argument rules shared by the SQL functions: quantities, batches, polling.
// Where upstream leaves a value unchecked by accident (a NULL qty reads the
// whole queue, a negative one fails inside LIMIT, a 0 ms poll interval busy-
// loops), these rules give a clear error or a safe value instead; see
// docs/compatibility.md.
#pragma once

#include <cstdint>

namespace pgmq::core {

// qty of read/pop: >= 0. May throw CoreError(InvalidParameter).
void CheckQuantity(int64_t qty);

// send_batch: msgs must be non-empty; a non-NULL headers array must have as
// many elements as msgs (upstream 1.11 messages). May throw.
void CheckBatch(bool msgs_null, int64_t msgs_count, bool headers_null, int64_t headers_count);

// read_with_poll timing, all in microseconds since any fixed epoch.
struct PollSchedule {
	int64_t deadline_us;
	int64_t interval_us;
};

// Deadline of a poll that starts at now_us. The interval is at least 1 ms,
// so a 0 poll interval cannot busy-loop. May throw on a negative interval.
PollSchedule MakePollSchedule(int64_t now_us, int32_t max_poll_seconds, int32_t poll_interval_ms);

// Milliseconds to wait before the next attempt, or -1 when the deadline has
// passed and the poll should return what it has (nothing).
long NextPollWaitMs(const PollSchedule &schedule, int64_t now_us);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
