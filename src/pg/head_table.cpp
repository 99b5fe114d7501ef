// src/pg/head_table.cpp
// The shared memory of queue heads (head_table.hpp): its size, its setup at
// startup, and the table of queues: finding, adding and replacing entries.
#include "pgmq/pg/head_table.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
}

namespace pgmq::pg::head {

HeadShared *shared = nullptr;
LWLock *entries_lock = nullptr;

namespace {

constexpr const char *kTrancheName = "pgmq queue heads";

HTAB *entries = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

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

}  // namespace

void InstallHeadTable()
{
	previous_shmem_request = shmem_request_hook;
	shmem_request_hook = RequestShmem;
	previous_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = StartupShmem;
}

void LowerTo(pg_atomic_uint64 *value, int64 id)
{
	uint64 seen = pg_atomic_read_u64(value);
	while (id < AsInt64(seen) && !pg_atomic_compare_exchange_u64(value, &seen, AsBits(id))) {
	}
}

QueueHeadEntry *FindEntry(uint64 key)
{
	return static_cast<QueueHeadEntry *>(hash_search(entries, &key, HASH_FIND, nullptr));
}

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
		pg_atomic_init_u64(&entry->generation, 0);
		SpinLockInit(&entry->raise_lock);
		pg_atomic_init_u64(&entry->late_low, AsBits(kNone));
		pg_atomic_init_u32(&entry->refreshing, 0);
		pg_atomic_init_u64(&entry->last_refresh, 0);
		pg_atomic_init_u64(&entry->last_rescan, 0);
		pg_atomic_init_u64(&entry->rescan_cost, 0);
		pg_atomic_init_u64(&entry->last_used, static_cast<uint64>(now));
	}
	LWLockRelease(entries_lock);
}

void RaiseHead(QueueHeadEntry *entry, int64 from, int64 to, uint64 generation)
{
	// Under the lock: a bump lands before the check (no raise) or after the
	// compare and swap (its lowering undoes the raise down to its id).
	SpinLockAcquire(&entry->raise_lock);
	uint64 expected = AsBits(from);
	if (pg_atomic_read_u64(&entry->generation) == generation)
		pg_atomic_compare_exchange_u64(&entry->head, &expected, AsBits(to));
	SpinLockRelease(&entry->raise_lock);
}

void VoidRaisesBelow(QueueHeadEntry *entry, int64 id)
{
	SpinLockAcquire(&entry->raise_lock);
	pg_atomic_fetch_add_u64(&entry->generation, 1);
	LowerTo(&entry->head, id);
	SpinLockRelease(&entry->raise_lock);
}

SendingSlot *MySlot()
{
	const int procno = MyProcNumber();
	return shared && procno < shared->slot_count ? &shared->slots[procno] : nullptr;
}

}  // namespace pgmq::pg::head
