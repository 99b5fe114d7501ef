// include/pgmq/pg/registered_queues.hpp
// The queues listed in pgmq.meta, for the calls that act on every queue
// (metrics_all, create_fifo_indexes_all). One bad row must not fail such a
// call for every queue. Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

struct RegisteredQueue {
	text *name;      // the meta spelling; queue.name points into it
	QueueRef queue;  // resolved: queue_relid is a table
};

// Reads pgmq.meta (ordered by name) into an array allocated in the current
// memory context; returns its length. A row whose name is not a valid
// queue name, whose queue table is missing, or whose queue table is not a
// table gets one WARNING and is left out. Connects to SPI itself: call it
// outside SPI.
int ReadRegisteredQueues(RegisteredQueue **queues);

}  // namespace pgmq::pg
