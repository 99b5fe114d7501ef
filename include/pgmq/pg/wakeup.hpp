// include/pgmq/pg/wakeup.hpp
// How read_with_poll waits between attempts: on its latch, so the wait is
// cancellable and costs no CPU. May ereport (query cancel, shutdown).
#pragma once

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// Sleeps up to timeout_ms, or less when woken. Checks for interrupts.
void WaitForMessages(const QueueRef &queue, long timeout_ms);

}  // namespace pgmq::pg
