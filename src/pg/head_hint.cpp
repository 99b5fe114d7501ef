// src/pg/head_hint.cpp
// Queue heads in shared memory (see head_hint.hpp).
//
// Shared state: a hash table of queues (database and table OID) with their
// head, and one slot per backend listing the queues its transaction is
// sending to, each with the lowest msg_id it inserted (or "not known yet").
//
// Why a refresh never passes a message. A refresh (one at a time per queue)
// (1) clears the queue's late_low, (2) finds m, the lowest msg_id at or after
// the old head in a new snapshot S, (3) reads the senders' slots, (4) reads
// late_low; the head becomes the least of m, the slots' ids and late_low.
// Take a message x < m that S does not see. Its sender took x before m was
// taken, so before S, and announced itself before that. At (3) the sender
// either still runs (its slot gives x or "not known": no move), or it has
// ended; a committed sender lowered late_low to x before it left its slot,
// and after (1), since it committed after S began: (4) sees x. (A sender
// skips late_low when it sees no refresh under way: the refresh counts
// itself before (1), so one that it missed began after the commit, and its
// S sees x.) A prepared transaction stays invisible after its backend moved
// on: while one exists, heads do not move. Rows written with plain SQL are
// not announced: every pgmq.queue_head_rescan_interval a refresh starts from
// the lowest id again and may lower the head.
#include "pgmq/pg/plan_cache.hpp"  // includes core headers: before any postgres.h

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"

extern "C" {
#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
}

namespace pgmq::pg {

namespace {

constexpr const char *kTrancheName = "pgmq queue heads";
constexpr long kMaxQueues = 4096;           // queues with a head; the least recently read is replaced
constexpr int kSendsPerSlot = 8;            // queues one transaction sends to before it counts as "all"
constexpr int64 kUnknown = PG_INT64_MIN;     // head: scan from the start; slot: id not known yet
constexpr int64 kNone = PG_INT64_MAX;        // late_low: nothing committed

struct QueueHeadEntry {
	uint64 key;  // hash key: database << 32 | queue table OID
	pg_atomic_uint64 head;      // int64 bits
	pg_atomic_uint64 late_low;  // int64 bits: lowest id committed during the current refresh
	pg_atomic_uint32 refreshing;
	pg_atomic_uint64 last_refresh;  // TimestampTz bits; 0: never
	pg_atomic_uint64 last_rescan;
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
	int slot_count;
	SendingSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

// GUCs pgmq.queue_head_refresh_interval and pgmq.queue_head_rescan_interval (ms).
int refresh_interval_ms = 20;
int rescan_interval_ms = 10000;

HeadShared *shared = nullptr;
HTAB *entries = nullptr;
LWLock *entries_lock = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

// This backend's transaction: how many keys its slot holds, whether it
// overflowed, and the entry whose refresh it holds (which cannot be
// replaced meanwhile).
int my_sends = 0;
bool my_overflow = false;
QueueHeadEntry *refreshing_entry = nullptr;

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

// Caller holds entries_lock exclusively. Never fails: a full table with
// every entry busy gives nullptr.
QueueHeadEntry *AddEntry(uint64 key, TimestampTz now)
{
	if (hash_get_num_entries(entries) >= kMaxQueues) {
		QueueHeadEntry *victim = LeastRecentlyUsed();
		if (!victim)
			return nullptr;
		hash_search(entries, &victim->key, HASH_REMOVE, nullptr);
	}
	bool found;
	auto *entry = static_cast<QueueHeadEntry *>(hash_search(entries, &key, HASH_ENTER_NULL, &found));
	if (!entry || found)
		return entry;
	pg_atomic_init_u64(&entry->head, AsBits(kUnknown));
	pg_atomic_init_u64(&entry->late_low, AsBits(kNone));
	pg_atomic_init_u32(&entry->refreshing, 0);
	// The first refresh (a rescan: last_rescan is 0) one interval after the
	// queue's first read here.
	pg_atomic_init_u64(&entry->last_refresh, static_cast<uint64>(now));
	pg_atomic_init_u64(&entry->last_rescan, 0);
	pg_atomic_init_u64(&entry->last_used, static_cast<uint64>(now));
	return entry;
}

QueueHeadEntry *FindEntry(uint64 key)
{
	return static_cast<QueueHeadEntry *>(hash_search(entries, &key, HASH_FIND, nullptr));
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
	case XACT_EVENT_PREPARE:
		EndSends(true);
		break;
	case XACT_EVENT_ABORT:
		EndSends(false);
		break;
	default:
		return;
	}
	ReleaseRefresh();
}

void OnSubtransactionEnd(SubXactEvent event, SubTransactionId, SubTransactionId, void *)
{
	// A refresh interrupted by an error caught at a savepoint.
	if (event == SUBXACT_EVENT_ABORT_SUB)
		ReleaseRefresh();
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

// The refresh itself, holding the entry's refresh flag. Requires SPI.
void Refresh(const QueueRef &queue, QueueHeadEntry *entry, TimestampTz now)
{
	const bool rescan = Due(pg_atomic_read_u64(&entry->last_rescan), rescan_interval_ms, now);
	if (rescan)
		pg_atomic_write_u64(&entry->last_rescan, static_cast<uint64>(now));
	const int64 old_head = AsInt64(pg_atomic_read_u64(&entry->head));
	pg_atomic_write_u64(&entry->late_low, AsBits(kNone));
	const uint64 overflows = pg_atomic_read_u64(&shared->overflow_commits);
	pg_memory_barrier();

	Datum from = Int64GetDatum(rescan ? kUnknown : old_head);
	const char nulls[1] = {' '};
	ExecutePlan(PlanFor(queue, core::Statement::LiveHead), &from, nulls);
	RequireColumnType(SPI_tuptable->tupdesc, 1, INT8OID, queue.queue_table);
	bool lowest_null, prepared_null;
	const Datum lowest = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &lowest_null);
	const bool prepared = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &prepared_null));
	SPI_freetuptable(SPI_tuptable);
	// An empty queue says nothing about where the next message lands.
	if (prepared || lowest_null)
		return;

	pg_memory_barrier();
	const int64 senders = SendersBound(KeyOf(queue.queue_relid));
	if (senders == kUnknown)
		return;
	pg_memory_barrier();
	const int64 head = Min(Min(DatumGetInt64(lowest), senders), AsInt64(pg_atomic_read_u64(&entry->late_low)));
	if (pg_atomic_read_u64(&shared->overflow_commits) != overflows)
		return;
	// A rescan may lower the head (plain SQL inserted below it); a refresh
	// only moves it forward.
	pg_atomic_write_u64(&entry->head, AsBits(rescan ? head : Max(head, old_head)));
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
	DefineCustomIntVariable("pgmq.queue_head_refresh_interval",
	                        "How often, at most, a read moves its queue's head past deleted messages.", nullptr,
	                        &refresh_interval_ms, 20, 0, 3600000, PGC_USERSET, GUC_UNIT_MS, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("pgmq.queue_head_rescan_interval",
	                        "How often a queue's head is found again from the lowest msg_id, for rows inserted with "
	                        "plain SQL.", nullptr, &rescan_interval_ms, 10000, 0, 3600000, PGC_USERSET, GUC_UNIT_MS,
	                        nullptr, nullptr, nullptr);
}

int64 QueueHead(const QueueRef &queue, TimestampTz now)
{
	if (!shared)
		return kUnknown;
	const uint64 key = KeyOf(queue.queue_relid);
	int64 head = kUnknown;
	LWLockAcquire(entries_lock, LW_SHARED);
	QueueHeadEntry *entry = FindEntry(key);
	if (entry) {
		head = AsInt64(pg_atomic_read_u64(&entry->head));
		// Written at most once a second: a shared cache line many readers touch.
		if (static_cast<uint64>(now) > pg_atomic_read_u64(&entry->last_used) + USECS_PER_SEC)
			pg_atomic_write_u64(&entry->last_used, static_cast<uint64>(now));
	}
	LWLockRelease(entries_lock);
	if (!entry) {
		LWLockAcquire(entries_lock, LW_EXCLUSIVE);
		AddEntry(key, now);
		LWLockRelease(entries_lock);
	}
	return head;
}

void AdvanceQueueHead(const QueueRef &queue, TimestampTz now)
{
	// Under REPEATABLE READ the snapshot is older than step (1) of a refresh.
	if (!shared || refreshing_entry || IsolationUsesXactSnapshot())
		return;
	LWLockAcquire(entries_lock, LW_SHARED);
	QueueHeadEntry *entry = FindEntry(KeyOf(queue.queue_relid));
	uint32 idle = 0;
	if (entry && Due(pg_atomic_read_u64(&entry->last_refresh), refresh_interval_ms, now) &&
	    pg_atomic_compare_exchange_u32(&entry->refreshing, &idle, 1)) {
		refreshing_entry = entry;
		pg_atomic_fetch_add_u32(&shared->refreshes, 1);  // before step (1): a full barrier
		pg_atomic_write_u64(&entry->last_refresh, static_cast<uint64>(now));
	}
	LWLockRelease(entries_lock);
	if (!refreshing_entry)
		return;
	Refresh(queue, refreshing_entry, now);
	ReleaseRefresh();
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
