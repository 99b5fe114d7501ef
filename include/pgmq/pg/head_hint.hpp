// include/pgmq/pg/head_hint.hpp
// Where each queue's live messages start: its head, the lowest msg_id a live
// message can have. A read's msg_id index scan starts there instead of at the
// index's first entry, so it does not step over the deleted rows that cleanup
// has not removed yet (a transaction holding an old snapshot keeps all of
// them; a consumed backlog leaves them until vacuum).
//
// The head is kept in shared memory (only when pgmq is preloaded; without, a
// read scans from the start, as before) and moved forward by readers, at most
// every few milliseconds, by looking for the lowest live id from the old head.
// Ids commit out of order: a sender that took id 5 may commit after one that
// took id 6 was seen. So every send announces itself before it inserts, and
// a head never moves past a message that a sender still in progress, or one
// that committed while the head was being computed, put in the queue. Rows
// added with plain SQL instead of pgmq's functions are not announced: a full
// rescan every few seconds finds them (docs/performance.md).
#pragma once

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// _PG_init: shared memory (while preloading) and the transaction callbacks.
void InitHeadHints();

// The head of queue: a read may skip every msg_id below it. PG_INT64_MIN when
// unknown. Never fails.
int64 QueueHead(const QueueRef &queue, TimestampTz now);

// After a read or pop in READ COMMITTED: when due, moves the queue's head to
// the lowest live msg_id. Requires SPI. May ereport.
void AdvanceQueueHead(const QueueRef &queue, TimestampTz now);

// Every statement that inserts into a queue table announces it first, then
// (when it knows it) the lowest msg_id it inserted; the announcement lasts
// until the transaction ends. Never fail.
void BeginSend(Oid queue_relid);
void NoteFirstSentId(Oid queue_relid, int64 msg_id);

}  // namespace pgmq::pg
