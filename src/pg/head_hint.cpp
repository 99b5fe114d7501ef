// src/pg/head_hint.cpp
// Queue heads in shared memory (see head_hint.hpp): where a read starts, and
// the refresh that moves a head, with the raise it keeps for its commit.
//
// Shared state (head_table.hpp): a hash table of queues (database and table
// OID) with their head, and one slot per backend listing the queues its
// transaction is sending to, each with the lowest msg_id it inserted (or
// "not known yet"; head_senders.cpp fills them).
//
// THE INVARIANT. Every row of a queue table that a new snapshot sees (a
// committed, live message) has msg_id >= the queue's head, except a row
// written with plain SQL that pgmq did not see (an INSERT that no pgmq send
// announced and pgmq's insert-notification trigger did not note: the queue
// has no such trigger, or a trigger wrote the row while one of pgmq's own
// inserts ran; an UPDATE of msg_id) or sent with an id taken after the
// queue's identity was set back (TRUNCATE ... RESTART IDENTITY, setval);
// such a row stays below the head at most until the first rescan that
// starts after its commit, and rescans start at most one
// pgmq.queue_head_rescan_interval apart while reads come (or 20 times the
// last rescan's duration, when deleted rows that vacuum has not removed
// make a rescan take longer than a twentieth of that).
//
// Why it holds:
// - Lowering the head is always safe (any value below a lower bound is one):
//   a refresh that finds a lower live id lowers it at once.
// - A head is raised only from the commit of the transaction whose refresh
//   computed the new value c from the old value s, only if the head still is
//   s (compare and swap) and only if the entry's generation still is the one
//   the refresh read before (1) (no insert of an old id came since): nothing
//   live lies below s, and the refresh proved nothing live in [s, c).
// - The proof of [s, c). A refresh (one at a time per queue) (1) clears the
//   queue's late_low, (2) finds m, the lowest msg_id >= s that a new
//   snapshot S sees, (3) reads the senders' slots, (4) reads late_low:
//   c = min(m, the slots' ids, late_low). Take a live x in [s, m) that S
//   does not see. Either its inserter had not committed: it took x before m
//   was taken, so before S, and announced itself before that; at (3) it
//   still runs (its slot gives x or "not known": no raise) or it has ended,
//   and a committed sender lowered late_low to x after (1) before leaving its
//   slot: (4) sees x. (A sender skips late_low when it sees no refresh under
//   way: the refresh counts itself before (1), so one it missed began after
//   the commit, and its S sees x.) Or this transaction deleted x: the raise
//   waits for this transaction's commit, and is dropped when it aborts, is
//   prepared, or any of its subtransactions aborts (a ROLLBACK TO SAVEPOINT,
//   an exception block), so x is gone for good when the head passes it.
//   Deletes of other transactions that S shows as done are committed. Sends
//   after (3) take ids above m, as long as the identity only grows (a move
//   takes new ids in its target: a send). A prepared transaction stays
//   invisible after its backend moved on: while one exists, a refresh
//   raises nothing.
// - Old ids. An insert that keeps them (unarchive, NoteInsertBelowHead) may
//   put x anywhere, also in [s, c) of a raise already computed and waiting
//   for its commit, another transaction's or its own (a read earlier in it),
//   with the head still s <= x. Before it commits, it lowers its slot's
//   bound to x (a bound still "not known" stays so until the transaction
//   ends: a later send's first id, above x, never replaces it), then,
//   under the entry's raise lock, bumps the generation and
//   lowers the head to x; a raise checks the generation and swaps under the
//   same lock. A refresh that read the generation after the bump (before
//   its (1)) finds x as the proof above finds a sender's id: in the lowered
//   slot at (3), in late_low, or in S; so c <= x. Any other raise is void:
//   it is checked after the bump (no raise) or swapped before it (the
//   lowering takes the head back to x before x can commit).
// - Plain SQL seen by pgmq's insert-notification trigger (NoteRowInserted).
//   The trigger runs for each row before its transaction commits, but after
//   the row took or was given x, so a refresh may have passed x already: it
//   is an insert of an old id, as above, its queue announced first when it
//   was not (the slot's bound then is x). The rows of pgmq's own statements
//   (from BeginSend to EndSend) are skipped: announced before they took
//   their ids.
// - A raise finds its entry again by key and incarnation: an entry evicted
//   (more queues than entries) and reused is never written by an old refresh.
// - Rescans: once per rescan interval a refresh starts from the lowest id
//   instead of s, and the read that runs it scans from what it found.
// A refresh runs no other role's code: it is skipped for a relation that is
// not a table, and for a table whose row security applies to the reader (its
// policies would also hide rows that others may read).
#include "pgmq/pg/plan_cache.hpp"  // includes core headers: before any postgres.h

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/head_senders.hpp"
#include "pgmq/pg/head_table.hpp"

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
}

namespace pgmq::pg {

using namespace head;

namespace {

constexpr int kPendingRaises = 8;  // raises one transaction can carry to its commit

// A raise computed by this transaction, applied at its commit.
struct PendingRaise {
	uint64 key;
	uint64 incarnation;
	int64 from;
	int64 to;
	uint64 generation;  // the entry's, when the refresh began
};

// GUCs pgmq.queue_head, pgmq.queue_head_refresh_interval and
// pgmq.queue_head_rescan_interval (ms).
bool head_enabled = true;
int refresh_interval_ms = 20;
int rescan_interval_ms = 1000;

// This backend's transaction: the entry whose refresh it holds (which cannot
// be replaced meanwhile), and the raises waiting for its commit.
QueueHeadEntry *refreshing_entry = nullptr;
PendingRaise pending[kPendingRaises];
int pending_count = 0;

void ReleaseRefresh()
{
	if (!refreshing_entry)
		return;
	pg_atomic_write_u32(&refreshing_entry->refreshing, 0);
	pg_atomic_fetch_sub_u32(&shared->refreshes, 1);
	refreshing_entry = nullptr;
}

// Keeps a raise for the commit; a later one for the same queue replaces it.
// When there is no room, the raise is dropped (the head stays lower: safe).
void KeepRaise(const PendingRaise &raise)
{
	for (int i = 0; i < pending_count; i++)
		if (pending[i].key == raise.key) {
			pending[i] = raise;
			return;
		}
	if (pending_count < kPendingRaises)
		pending[pending_count++] = raise;
}

// At commit, after this transaction's deletes became final. Cannot fail.
void ApplyRaises()
{
	if (pending_count == 0)
		return;
	LWLockAcquire(entries_lock, LW_SHARED);
	for (int i = 0; i < pending_count; i++) {
		QueueHeadEntry *entry = FindEntry(pending[i].key);
		if (entry && entry->incarnation == pending[i].incarnation)
			RaiseHead(entry, pending[i].from, pending[i].to, pending[i].generation);
	}
	LWLockRelease(entries_lock);
	pending_count = 0;
}

void OnTransactionEnd(XactEvent event, void *)
{
	switch (event) {
	case XACT_EVENT_COMMIT:
		EndSends(true);
		ApplyRaises();
		break;
	case XACT_EVENT_PREPARE:
		// The prepared transaction's deletes may still be rolled back.
		EndSends(true);
		pending_count = 0;
		break;
	case XACT_EVENT_ABORT:
		EndSends(false);
		pending_count = 0;
		break;
	default:
		return;
	}
	ReleaseRefresh();
}

void OnSubtransactionEnd(SubXactEvent event, SubTransactionId, SubTransactionId, void *)
{
	// Rows this transaction deleted before its raises were computed may come
	// back: keep no raise. A statement BeginSend announced may have failed.
	if (event == SUBXACT_EVENT_ABORT_SUB) {
		pending_count = 0;
		EndSend();
	}
}

// Whether interval_ms has passed since last (a TimestampTz, 0 for never).
bool Due(uint64 last, int interval_ms, TimestampTz now)
{
	return last == 0 || now - static_cast<TimestampTz>(last) >= interval_ms * int64{1000};
}

// A rescan walks every deleted row vacuum has not removed yet (a consumed
// backlog, a held snapshot): it waits at least this many times its last
// duration, so that rescans take at most 5% of one backend's time. An
// interval of 0 asks for a rescan at every read, whatever it costs.
constexpr int64 kRescanCostFactor = 20;

bool RescanDue(QueueHeadEntry *entry, TimestampTz now)
{
	if (rescan_interval_ms == 0)
		return true;
	const uint64 last = pg_atomic_read_u64(&entry->last_rescan);
	const int64 wait_us = Max(rescan_interval_ms * int64{1000},
	                          kRescanCostFactor * static_cast<int64>(pg_atomic_read_u64(&entry->rescan_cost)));
	return last == 0 || now - static_cast<TimestampTz>(last) >= wait_us;
}

// Whether this backend may keep a head for queue and move it: a table (not
// a view or anything else that runs code), readable by the current user, and
// without row security that would hide rows from it. Syscache lookups only.
bool MayKeepHead(const QueueRef &queue)
{
	const char relkind = get_rel_relkind(queue.queue_relid);
	bool missing = false;  // dropped meanwhile
	return (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) &&
	       pg_class_aclcheck_ext(queue.queue_relid, GetUserId(), ACL_SELECT, &missing) == ACLCHECK_OK && !missing &&
	       check_enable_rls(queue.queue_relid, InvalidOid, true) != RLS_ENABLED;
}

// The refresh itself, holding the entry's refresh flag; returns where this
// read may start. Requires SPI. May ereport.
int64 Refresh(const QueueRef &queue, QueueHeadEntry *entry, bool rescan)
{
	const int64 from = AsInt64(pg_atomic_read_u64(&entry->head));
	// Before the slots are read (the barrier below): an insert below the
	// head bumps it after lowering its slot, so this refresh sees one of them.
	const uint64 generation = pg_atomic_read_u64(&entry->generation);
	pg_atomic_write_u64(&entry->late_low, AsBits(kNone));
	const uint64 overflows = pg_atomic_read_u64(&shared->overflow_commits);
	pg_memory_barrier();

	Datum start = Int64GetDatum(rescan ? kUnknown : from);
	const char nulls[1] = {' '};
	const TimestampTz started = GetCurrentTimestamp();
	ExecutePlan(PlanFor(queue, core::Statement::LiveHead), &start, nulls);
	if (rescan)
		pg_atomic_write_u64(&entry->rescan_cost, static_cast<uint64>(GetCurrentTimestamp() - started));
	RequireColumnType(SPI_tuptable->tupdesc, 1, INT8OID, queue.queue_table);
	bool lowest_null, prepared_null;
	const Datum lowest_datum = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &lowest_null);
	const bool prepared = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &prepared_null));
	SPI_freetuptable(SPI_tuptable);
	// An empty queue says nothing about where the next message lands.
	const int64 lowest = lowest_null ? kNone : DatumGetInt64(lowest_datum);
	// Whatever else is unsure, nothing live was below lowest in the snapshot.
	if (lowest < from)
		LowerTo(&entry->head, lowest);
	if (prepared || lowest_null)
		return Min(from, lowest);

	pg_memory_barrier();
	const int64 senders = SendersBound(entry->key);
	if (senders == kUnknown)
		return Min(from, lowest);
	pg_memory_barrier();
	const int64 head = Min(Min(lowest, senders), AsInt64(pg_atomic_read_u64(&entry->late_low)));
	if (pg_atomic_read_u64(&shared->overflow_commits) != overflows)
		return Min(from, lowest);
	if (head < from)
		LowerTo(&entry->head, head);
	else if (head > from)
		KeepRaise({entry->key, entry->incarnation, from, head, generation});
	return head;
}

}  // namespace

void InitHeadHints()
{
	if (process_shared_preload_libraries_in_progress)
		InstallHeadTable();
	RegisterXactCallback(OnTransactionEnd, nullptr);
	RegisterSubXactCallback(OnSubtransactionEnd, nullptr);
	DefineCustomBoolVariable("pgmq.queue_head",
	                         "Whether reads start at their queue's head (the lowest live msg_id, kept in shared "
	                         "memory) instead of the first entry of the msg_id index.",
	                         nullptr, &head_enabled, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("pgmq.queue_head_refresh_interval",
	                        "How often, at most, a read moves its queue's head past deleted messages.", nullptr,
	                        &refresh_interval_ms, 20, 0, 3600000, PGC_USERSET, GUC_UNIT_MS, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("pgmq.queue_head_rescan_interval",
	                        "How often a queue's head is found again from the lowest msg_id, for rows written with "
	                        "plain SQL.", nullptr, &rescan_interval_ms, 1000, 0, 3600000, PGC_USERSET, GUC_UNIT_MS,
	                        nullptr, nullptr, nullptr);
}

int64 ScanStart(const QueueRef &queue, TimestampTz now)
{
	if (!shared || !head_enabled || RecoveryInProgress())
		return kUnknown;
	const uint64 key = KeyOf(queue.queue_relid);
	int64 head = kUnknown;
	bool due = false;
	LWLockAcquire(entries_lock, LW_SHARED);
	QueueHeadEntry *entry = FindEntry(key);
	if (entry) {
		head = AsInt64(pg_atomic_read_u64(&entry->head));
		// Written at most once a second: a shared cache line many readers touch.
		if (static_cast<uint64>(now) > pg_atomic_read_u64(&entry->last_used) + USECS_PER_SEC)
			pg_atomic_write_u64(&entry->last_used, static_cast<uint64>(now));
		due = Due(pg_atomic_read_u64(&entry->last_refresh), refresh_interval_ms, now) || RescanDue(entry, now);
	}
	LWLockRelease(entries_lock);
	if (!entry) {
		// Only for tables this role may read: another role cannot fill the
		// table of heads with queues it has no rights on.
		if (MayKeepHead(queue))
			AddEntry(key, now);
		return kUnknown;
	}
	// Under REPEATABLE READ the snapshot is older than step (1) of a refresh;
	// a refresh already under way here is one further up the stack (a
	// trigger reading another queue). A role that may not refresh leaves the
	// refresh, and the rescan, to the others.
	if (!due || refreshing_entry || IsolationUsesXactSnapshot() || !MayKeepHead(queue))
		return head;
	bool rescan = false;
	LWLockAcquire(entries_lock, LW_SHARED);
	entry = FindEntry(key);
	uint32 idle = 0;
	if (entry) {
		rescan = RescanDue(entry, now);
		if ((rescan || Due(pg_atomic_read_u64(&entry->last_refresh), refresh_interval_ms, now)) &&
		    pg_atomic_compare_exchange_u32(&entry->refreshing, &idle, 1)) {
			refreshing_entry = entry;
			pg_atomic_fetch_add_u32(&shared->refreshes, 1);  // before step (1): a full barrier
			pg_atomic_write_u64(&entry->last_refresh, static_cast<uint64>(now));
			if (rescan)
				pg_atomic_write_u64(&entry->last_rescan, static_cast<uint64>(now));
		}
	}
	LWLockRelease(entries_lock);
	if (!refreshing_entry)
		return head;
	volatile int64 start = head;
	PG_TRY();
	{
		start = Refresh(queue, refreshing_entry, rescan);
	}
	PG_FINALLY();
	{
		ReleaseRefresh();
	}
	PG_END_TRY();
	return start;
}

}  // namespace pgmq::pg
