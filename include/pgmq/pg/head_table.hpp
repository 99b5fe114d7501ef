// include/pgmq/pg/head_table.hpp
// The shared memory behind queue heads (head_hint.hpp), for the head files
// only: a hash table of queues (database and table OID) with their head, and
// one slot per backend listing the queues its transaction is sending to.
// head_table.cpp allocates and finds them, head_senders.cpp fills the slots,
// head_hint.cpp refreshes and raises the heads (and states the invariant).
#pragma once

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
}

namespace pgmq::pg::head {

constexpr long kMaxQueues = 4096;         // queues with a head; the least recently read is replaced
constexpr int kSendsPerSlot = 8;          // queues one transaction sends to before it counts as "all"
constexpr int64 kUnknown = PG_INT64_MIN;  // head: scan from the start; slot: id not known yet
constexpr int64 kNone = PG_INT64_MAX;     // late_low: nothing committed; a refresh: no live row

struct QueueHeadEntry {
	uint64 key;          // hash key: database << 32 | queue table OID
	uint64 incarnation;  // unique per entry ever added
	pg_atomic_uint64 head;      // int64 bits
	// Bumped by every insert that may lie below a raise computed before it:
	// a raise applies only if the generation is the one its refresh read.
	pg_atomic_uint64 generation;
	slock_t raise_lock;  // a raise's check and compare and swap against a bump
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

// Both null unless pgmq was preloaded. Entries are found, added and removed
// under entries_lock; their fields are atomics, read and written under it
// (shared is enough) so that the entry is not removed meanwhile.
extern HeadShared *shared;
extern LWLock *entries_lock;

// _PG_init, while preloading: asks for the shared memory and sets it up at
// startup.
void InstallHeadTable();

inline int64 AsInt64(uint64 bits) { return static_cast<int64>(bits); }
inline uint64 AsBits(int64 value) { return static_cast<uint64>(value); }

inline uint64 KeyOf(Oid queue_relid) { return (static_cast<uint64>(MyDatabaseId) << 32) | queue_relid; }

// value = min(value, id), atomically.
void LowerTo(pg_atomic_uint64 *value, int64 id);

// Caller holds entries_lock. key's entry, or nullptr.
QueueHeadEntry *FindEntry(uint64 key);

// Adds key's entry, with its head unknown and its first refresh (a rescan)
// due at once. Never fails: a full table with every entry busy adds none.
void AddEntry(uint64 key, TimestampTz now);

// Caller holds entries_lock. Moves entry's head from `from` up to `to` if it
// still is `from` and no insert has bumped the generation since the refresh
// that computed the raise read `generation`. Cannot fail.
void RaiseHead(QueueHeadEntry *entry, int64 from, int64 to, uint64 generation);

// Caller holds entries_lock. For an insert at id that no refresh may have
// seen (the inserter's slot already bounds it): voids every raise computed
// so far, by this transaction or others, and lowers the head to id. Cannot
// fail.
void VoidRaisesBelow(QueueHeadEntry *entry, int64 id);

// This backend's sender slot, or nullptr (not preloaded).
SendingSlot *MySlot();

}  // namespace pgmq::pg::head
