// include/pgmq/pg/wakeup.hpp
// How read_with_poll waits between attempts, and how a committed send wakes
// it. When pgmq is in shared_preload_libraries, each backend has a slot in
// shared memory naming the queue it waits on (database and table OID); a
// transaction that sent to a queue sets the latches of that queue's waiters
// right after it commits, or, if it was prepared, when COMMIT PREPARED returns.
// Without preloading, waiting falls back to the poll interval. Either way the
// wait is on the backend's latch: cancellable, and no CPU while idle.
#pragma once

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// _PG_init: shared-memory and utility hooks (only while preloading) and the
// transaction callback that delivers wake-ups at commit.
void InitWakeup();

// Marks this backend as waiting on the count queues (more than eight: on
// every queue of the database) until the transaction ends or StopWaiting is
// called.
void StartWaiting(const QueueRef *queues, int count);
inline void StartWaiting(const QueueRef &queue) { StartWaiting(&queue, 1); }
void StopWaiting();

// Sleeps up to timeout_ms, or less when woken; returns whether it was woken
// (its latch was set) rather than timed out. Checks for interrupts; may
// ereport (query cancel, shutdown).
bool WaitForMessages(long timeout_ms);

// Forgets a wake-up that arrived before this backend started waiting (its
// latch, set for some other reason): call before StartWaiting.
void ForgetWakeups();

// Remembers that this transaction sent to queue: its waiters are woken when
// the transaction commits. Never fails.
void NoteMessagesSent(Oid queue_relid);
inline void NoteMessagesSent(const QueueRef &queue) { NoteMessagesSent(queue.queue_relid); }

}  // namespace pgmq::pg
