// include/pgmq/pg/head_hint.hpp
// Where each queue's live messages start: its head, a lower bound on the
// msg_id of every live message. A read's msg_id index scan starts there
// instead of at the index's first entry, so it does not step over the
// deleted rows that cleanup has not removed yet (a transaction holding an
// old snapshot keeps all of them; a consumed backlog leaves them until
// vacuum).
//
// The head is kept in shared memory (only when pgmq is preloaded and
// pgmq.queue_head is on; otherwise a read scans from the start) and moved by
// readers: lowered at once whenever they find a lower live id, raised only
// when their transaction commits (its own deletes are then final). The
// invariant, and why no interleaving breaks it, is at the top of
// head_hint.cpp and in docs/architecture.md.
#pragma once

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// _PG_init: shared memory (while preloading), the GUCs and the transaction
// callbacks.
void InitHeadHints();

// Where a read or pop of queue may start its scan (msg_id >= the result):
// the queue's head, refreshed first when due, or PG_INT64_MIN (scan from
// the start) when the head is unknown or off. Requires SPI. May ereport (the
// refresh runs a statement).
int64 ScanStart(const QueueRef &queue, TimestampTz now);

// Every statement that inserts into a queue table with pgmq's functions
// announces it first, then (when it knows it) the lowest msg_id it inserted;
// the announcement lasts until the transaction ends. EndSend follows the
// statement, whatever it inserted: until then the rows that pgmq's
// insert-notification trigger sees are the statement's own, already
// announced (an error ends it too). Never fail.
void BeginSend(Oid queue_relid);
void NoteFirstSentId(Oid queue_relid, int64 msg_id);
void EndSend();

// For pgmq's insert-notification trigger, row by row: whether rows inserted
// now need NoteRowInserted (heads are kept, and no statement BeginSend
// announced is running), and the note, before the row's transaction
// commits: msg_id, taken from the identity or written by plain SQL, is
// announced in this transaction's sender slot and noted as an old id, as
// NoteInsertBelowHead does. Never fail.
bool InsertNeedsHeadNote();
void NoteRowInserted(Oid queue_relid, int64 msg_id);

// After BeginSend, for an insert that kept old ids (unarchive), before the
// transaction commits: msg_id, the lowest id inserted, may lie below the
// head, or below a raise a refresh computed and keeps for its commit. Every
// such raise, this transaction's and others', is voided, the head is lowered
// to msg_id at once, and no refresh raises past it until the transaction
// ends. Never fails.
void NoteInsertBelowHead(Oid queue_relid, int64 msg_id);

}  // namespace pgmq::pg
