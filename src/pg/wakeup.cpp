// src/pg/wakeup.cpp
// read_with_poll's wait (see wakeup.hpp).
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
}

namespace pgmq::pg {

void WaitForMessages(const QueueRef &, long timeout_ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

}  // namespace pgmq::pg
