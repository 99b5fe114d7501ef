// include/pgmq/pg/notify.hpp
// Insert notifications sent by something other than their trigger.
#pragma once

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// Queues one NOTIFY on the insert channel of `queue` ("pgmq.q_<name as
// created>.INSERT") when it has insert notifications on (its trigger is
// there and enabled), sent if this transaction commits, unthrottled. For
// resume, which makes waiting messages readable without inserting any: a
// LISTENing consumer learns of it as a waiting read_with_poll does. Needs
// no privilege on pgmq.notify_insert_throttle. May ereport.
void NotifyQueueListeners(const QueueRef &queue);

}  // namespace pgmq::pg
