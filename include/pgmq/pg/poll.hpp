// include/pgmq/pg/poll.hpp
// The loop behind every *_with_poll function: attempt, and while nothing was
// claimed, wait (woken early by a committed send, see wakeup.hpp) until
// max_poll_seconds have passed.
#pragma once

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// One read attempt: claims messages, leaving them in SPI_tuptable; returns how many.
using ReadAttempt = uint64 (*)(const void *request);

// Polls with max_poll_seconds and poll_interval_ms taken from arguments 3 and
// 4 (their position in every *_with_poll function), then emits the claimed
// rows. Requires SPI and a materialized result. May ereport.
void PollForMessages(FunctionCallInfo fcinfo, const QueueRef &queue, ReadAttempt attempt, const void *request);

}  // namespace pgmq::pg
