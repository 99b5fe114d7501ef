// src/pg/head_hint.cpp
// Queue heads in shared memory (see head_hint.hpp).
//
// Shared state: a hash table of queues (database and table OID) with their
// head, and one slot per backend listing the queues its transaction is
// sending to, each with the lowest msg_id it inserted (or "not known yet").
//
// THE INVARIANT. Every row of a queue table that a new snapshot sees (a
// committed, live message) has msg_id >= the queue's head, except a row
// written with plain SQL (an INSERT that no pgmq send announced, an UPDATE
// of msg_id) or with an id taken after the queue's identity was set back
// (TRUNCATE ... RESTART IDENTITY, setval); such a row stays below the head
// at most until the first rescan that starts after its commit, and rescans
// start at most one pgmq.queue_head_rescan_interval apart while reads come
// (or 20 times the last rescan's duration, when deleted rows that vacuum
// has not removed make a rescan take longer than a twentieth of that).
//
// Why it holds:
// - Lowering the head is always safe (any value below a lower bound is one):
//   a refresh that finds a lower live id lowers it at once.
// - A head is raised only from the commit of the transaction whose refresh
//   computed the new value c from the old value s, and only if the head
//   still is s (compare and swap): nothing live lies below s, and the
//   refresh proved nothing live in [s, c).
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
//   after (3) take ids above m, as long as the identity only grows; an
//   insert that keeps old ids (unarchive, NoteInsertBelowHead) lowers its
//   slot's bound and then the head before it commits, so a refresh that
//   starts after that reads the lowered bound, and one that started before
//   raises from the old head, which its compare and swap no longer finds.
//   A prepared transaction stays invisible after its backend moved on:
//   while one exists, a refresh raises nothing.
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

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
}

namespace pgmq::pg {

namespace {

constexpr const char *kTrancheName = "pgmq queue heads";
constexpr long kMaxQueues = 4096;           // queues with a head; the least recently read is replaced
constexpr int kSendsPerSlot = 8;            // queues one transaction sends to before it counts as "all"
constexpr int kPendingRaises = 8;           // raises one transaction can carry to its commit
constexpr int64 kUnknown = PG_INT64_MIN;     // head: scan from the start; slot: id not known yet
constexpr int64 kNone = PG_INT64_MAX;        // late_low: nothing committed; a refresh: no live row

struct QueueHeadEntry {
	uint64 key;          // hash key: database << 32 | queue table OID
	uint64 incarnation;  // unique per entry ever added
	pg_atomic_uint64 head;      // int64 bits
	pg_atomic_uint64 late_low;  // int64 bits: lowest id committed during the current refresh
	pg_atomic_uint32 refreshing;
	pg_atomic_uint64 last_refresh;  // TimestampTz bits; 0: never
	pg_atomic_uint64 last_rescan;
	pg_atomic_uint64 rescan_cost;  // microseconds the last rescan's statement took
	pg_atomic_uint64 last_used;
};

struct SendingSlot {
	pg_atomic_uint64 key[kSendsPerSlot];  // 0: free
	pg_atomic_uint64 low[kSendsPerSlot];  // int64 bits; kUnknown until the first id is known
	pg_atomic_uint32 all_queues_of;       // database OID when the transaction sent to more queues
};

struct HeadShared {
	// Bumped when a transaction that sent to more than kSendsPerSlot queues
	// ends: a refresh it overlapped cannot tell whether it sent to its queue.
	pg_atomic_uint64 overflow_commits;
	// Refreshes under way, of any queue: while there are none, a commit has
	// no late bound to lower (a refresh that starts later sees its rows).
	pg_atomic_uint32 refreshes;
	uint64 incarnations;  // under entries_lock (exclusive)
	int slot_count;
	SendingSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

// A raise computed by this transaction, applied at its commit.
struct PendingRaise {
	uint64 key;
	uint64 incarnation;
	int64 from;
	int64 to;
};

// GUCs pgmq.queue_head, pgmq.queue_head_refresh_interval and
// pgmq.queue_head_rescan_interval (ms).
bool head_enabled = true;
int refresh_interval_ms = 20;
int rescan_interval_ms = 1000;

HeadShared *shared = nullptr;
HTAB *entries = nullptr;
LWLock *entries_lock = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

// This backend's transaction: how many keys its slot holds, whether it
// overflowed, the entry whose refresh it holds (which cannot be replaced
// meanwhile), and the raises waiting for its commit.
int my_sends = 0;
bool my_overflow = false;
QueueHeadEntry *refreshing_entry = nullptr;
PendingRaise pending[kPendingRaises];
int pending_count = 0;

int64 AsInt64(uint64 bits) { return static_cast<int64>(bits); }
uint64 AsBits(int64 value) { return static_cast<uint64>(value); }

uint64 KeyOf(Oid queue_relid) { return (static_cast<uint64>(MyDatabaseId) << 32) | queue_relid; }

Size SharedSize(int slots) { return add_size(offsetof(HeadShared, slots), mul_size(slots, sizeof(SendingSlot))); }

void RequestShmem()
{
	if (previous_shmem_request)
		previous_shmem_request();
	RequestAddinShmemSpace(add_size(SharedSize(MaxBackends), hash_estimate_size(kMaxQueues, sizeof(QueueHeadEntry))));
	RequestNamedLWLockTranche(kTrancheName, 1);
}

void StartupShmem()
{
	if (previous_shmem_startup)
		previous_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found;
	shared = static_cast<HeadShared *>(ShmemInitStruct("pgmq queue head slots", SharedSize(MaxBackends), &found));
	if (!found) {
		pg_atomic_init_u64(&shared->overflow_commits, 0);
		pg_atomic_init_u32(&shared->refreshes, 0);
		shared->incarnations = 0;
		shared->slot_count = MaxBackends;
		for (int i = 0; i < MaxBackends; i++) {
			for (int k = 0; k < kSendsPerSlot; k++) {
				pg_atomic_init_u64(&shared->slots[i].key[k], 0);
				pg_atomic_init_u64(&shared->slots[i].low[k], AsBits(kUnknown));
			}
			pg_atomic_init_u32(&shared->slots[i].all_queues_of, 0);
		}
	}
	HASHCTL info;
	memset(&info, 0, sizeof info);
	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(QueueHeadEntry);
	entries = ShmemInitHash("pgmq queue heads", kMaxQueues, kMaxQueues, &info, HASH_ELEM | HASH_BLOBS);
	entries_lock = &GetNamedLWLockTranche(kTrancheName)->lock;
	LWLockRelease(AddinShmemInitLock);
}

SendingSlot *MySlot()
{
	const int procno = MyProcNumber();
	return shared && procno < shared->slot_count ? &shared->slots[procno] : nullptr;
}

// Caller holds entries_lock exclusively. The least recently used entry that
// no refresh holds, or nullptr.
QueueHeadEntry *LeastRecentlyUsed()
{
	HASH_SEQ_STATUS scan;
	hash_seq_init(&scan, entries);
	QueueHeadEntry *oldest = nullptr;
	while (auto *entry = static_cast<QueueHeadEntry *>(hash_seq_search(&scan)))
		if (pg_atomic_read_u32(&entry->refreshing) == 0 &&
		    (!oldest || pg_atomic_read_u64(&entry->last_used) < pg_atomic_read_u64(&oldest->last_used)))
			oldest = entry;
	return oldest;
}

QueueHeadEntry *FindEntry(uint64 key)
{
	return static_cast<QueueHeadEntry *>(hash_search(entries, &key, HASH_FIND, nullptr));
}

// Adds key's entry, with its head unknown and its first refresh (a rescan)
// due at once. Never fails: a full table with every entry busy adds none.
void AddEntry(uint64 key, TimestampTz now)
{
	LWLockAcquire(entries_lock, LW_EXCLUSIVE);
	if (!FindEntry(key) && hash_get_num_entries(entries) >= kMaxQueues) {
		if (QueueHeadEntry *victim = LeastRecentlyUsed())
			hash_search(entries, &victim->key, HASH_REMOVE, nullptr);
	}
	bool found;
	auto *entry = static_cast<QueueHeadEntry *>(hash_search(entries, &key, HASH_ENTER_NULL, &found));
	if (entry && !found) {
		entry->incarnation = ++shared->incarnations;
		pg_atomic_init_u64(&entry->head, AsBits(kUnknown));
		pg_atomic_init_u64(&entry->late_low, AsBits(kNone));
		pg_atomic_init_u32(&entry->refreshing, 0);
		pg_atomic_init_u64(&entry->last_refresh, 0);
		pg_atomic_init_u64(&entry->last_rescan, 0);
		pg_atomic_init_u64(&entry->rescan_cost, 0);
		pg_atomic_init_u64(&entry->last_used, static_cast<uint64>(now));
	}
	LWLockRelease(entries_lock);
}

// value = min(value, id), atomically.
void LowerTo(pg_atomic_uint64 *value, int64 id)
{
	uint64 seen = pg_atomic_read_u64(value);
	while (id < AsInt64(seen) && !pg_atomic_compare_exchange_u64(value, &seen, AsBits(id))) {
	}
}

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
		uint64 expected = AsBits(pending[i].from);
		if (entry && entry->incarnation == pending[i].incarnation)
			pg_atomic_compare_exchange_u64(&entry->head, &expected, AsBits(pending[i].to));
	}
	LWLockRelease(entries_lock);
	pending_count = 0;
}

// At commit or prepare (after the transaction's rows became visible, or were
// made durable): what this transaction sent reaches the refreshes under way,
// then its slot is freed. Cannot fail.
void EndSends(bool committed)
{
	SendingSlot *slot = MySlot();
	if (!slot || (my_sends == 0 && !my_overflow))
		return;
	pg_memory_barrier();  // the commit is visible before the count is read
	if (committed && pg_atomic_read_u32(&shared->refreshes) != 0) {
		LWLockAcquire(entries_lock, LW_SHARED);
		for (int k = 0; k < my_sends; k++)
			if (QueueHeadEntry *entry = FindEntry(pg_atomic_read_u64(&slot->key[k])))
				LowerTo(&entry->late_low, AsInt64(pg_atomic_read_u64(&slot->low[k])));
		LWLockRelease(entries_lock);
		if (my_overflow)
			pg_atomic_fetch_add_u64(&shared->overflow_commits, 1);
	}
	for (int k = 0; k < my_sends; k++)
		pg_atomic_write_u64(&slot->key[k], 0);
	pg_atomic_write_u32(&slot->all_queues_of, 0);
	my_sends = 0;
	my_overflow = false;
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
	// back: keep no raise.
	if (event == SUBXACT_EVENT_ABORT_SUB)
		pending_count = 0;
}

// The bound the running senders put on key's head, or kUnknown when one of
// them cannot tell yet.
int64 SendersBound(uint64 key)
{
	int64 bound = kNone;
	for (int i = 0; i < shared->slot_count; i++) {
		SendingSlot &slot = shared->slots[i];
		if (pg_atomic_read_u32(&slot.all_queues_of) == MyDatabaseId)
			return kUnknown;
		for (int k = 0; k < kSendsPerSlot; k++)
			if (pg_atomic_read_u64(&slot.key[k]) == key) {
				pg_read_barrier();  // the key is written after its low
				bound = Min(bound, AsInt64(pg_atomic_read_u64(&slot.low[k])));
			}
	}
	return bound;
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
		KeepRaise({entry->key, entry->incarnation, from, head});
	return head;
}

}  // namespace

void InitHeadHints()
{
	if (process_shared_preload_libraries_in_progress) {
		previous_shmem_request = shmem_request_hook;
		shmem_request_hook = RequestShmem;
		previous_shmem_startup = shmem_startup_hook;
		shmem_startup_hook = StartupShmem;
	}
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

void BeginSend(Oid queue_relid)
{
	SendingSlot *slot = MySlot();
	if (!slot || my_overflow || !OidIsValid(queue_relid))
		return;
	const uint64 key = KeyOf(queue_relid);
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key)
			return;
	if (my_sends == kSendsPerSlot) {
		pg_atomic_write_u32(&slot->all_queues_of, MyDatabaseId);
		my_overflow = true;
		pg_memory_barrier();
		return;
	}
	pg_atomic_write_u64(&slot->low[my_sends], AsBits(kUnknown));
	pg_write_barrier();
	pg_atomic_write_u64(&slot->key[my_sends], key);
	my_sends++;
	// Announced before the insert takes its first id.
	pg_memory_barrier();
}

void NoteInsertBelowHead(Oid queue_relid, int64 msg_id)
{
	SendingSlot *slot = MySlot();
	if (!slot)
		return;
	const uint64 key = KeyOf(queue_relid);
	// The slot first: a refresh that starts from the lowered head reads the
	// slot after it, so its bound is at most msg_id; one that started before
	// raises from the old head, which the lowering below makes fail. "Not
	// known" stays: it already forbids every raise.
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key && AsInt64(pg_atomic_read_u64(&slot->low[k])) != kUnknown)
			LowerTo(&slot->low[k], msg_id);
	pg_memory_barrier();
	LWLockAcquire(entries_lock, LW_SHARED);
	if (QueueHeadEntry *entry = FindEntry(key))
		LowerTo(&entry->head, msg_id);
	LWLockRelease(entries_lock);
}

void NoteFirstSentId(Oid queue_relid, int64 msg_id)
{
	SendingSlot *slot = MySlot();
	if (!slot)
		return;
	const uint64 key = KeyOf(queue_relid);
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key && AsInt64(pg_atomic_read_u64(&slot->low[k])) == kUnknown)
			pg_atomic_write_u64(&slot->low[k], AsBits(msg_id));
}

}  // namespace pgmq::pg
