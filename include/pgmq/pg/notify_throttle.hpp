// include/pgmq/pg/notify_throttle.hpp
// The part of the insert-notification throttle decided at commit. An insert
// that finds its queue's throttle row due but held by a concurrent sender
// cannot know whether that sender will commit (and notify) or roll back, so
// it decides at its own commit: it notifies unless a notification of the
// queue has committed since it inserted. Committed notifications of throttled
// queues are recorded in shared memory by database and queue name (only when
// pgmq is preloaded; without it a deferred insert always notifies). Forgetting
// is always safe: it only costs an extra notification. See docs/notify.md.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// _PG_init: shared memory (only while preloading) and the callbacks.
void InitNotifyThrottle();

// This transaction stamped queue_name's throttle row and notified: its
// commit is recorded as the queue's last committed notification.
void NoteThrottleStamped(const char *queue_name);

// queue_name's row was due but held: at commit, NOTIFY channel unless a
// notification of the queue committed at or after since. Returns false when
// the decision cannot be deferred (too many in one transaction): notify now.
bool DeferThrottledNotify(const char *queue_name, const char *channel, TimestampTz since);

}  // namespace pgmq::pg
