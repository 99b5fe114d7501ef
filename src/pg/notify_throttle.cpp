// src/pg/notify_throttle.cpp
// Commit-time decisions of the insert-notification throttle (see
// notify_throttle.hpp).
//
// Per backend: the throttled queues this transaction notified (stamped) or
// deferred, with the subtransaction that did it (a rolled-back subtransaction
// discards its NOTIFY, so its entries go too). Shared: a small direct-mapped
// table of the last committed notification per (database, queue name); a
// collision overwrites, which only makes a deferred insert notify.
#include "pgmq/pg/notify_throttle.hpp"

extern "C" {
#include "access/xact.h"
#include "commands/async.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
}

namespace pgmq::pg {

namespace {

constexpr const char *kTrancheName = "pgmq notify throttle";

struct CommittedNotify {
	Oid database;  // InvalidOid: free
	char queue[NAMEDATALEN];
	TimestampTz at;
};

constexpr int kSharedSlots = 1024;
CommittedNotify *committed = nullptr;  // [kSharedSlots], guarded by committed_lock
LWLock *committed_lock = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

struct PendingNotify {
	bool deferred;  // decided at commit; false: stamped, notifies
	bool notifies;  // will notify (known for stamped, decided at PRE_COMMIT for deferred)
	SubTransactionId subtransaction;
	TimestampTz since;
	char queue[NAMEDATALEN];
	char channel[2 * NAMEDATALEN];
};

constexpr int kMaxPending = 16;
PendingNotify pending[kMaxPending];
int pending_count = 0;

Size SharedSize() { return mul_size(kSharedSlots, sizeof(CommittedNotify)); }

void RequestShmem()
{
	if (previous_shmem_request)
		previous_shmem_request();
	RequestAddinShmemSpace(SharedSize());
	RequestNamedLWLockTranche(kTrancheName, 1);
}

void StartupShmem()
{
	if (previous_shmem_startup)
		previous_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found;
	committed = static_cast<CommittedNotify *>(ShmemInitStruct("pgmq notify throttle", SharedSize(), &found));
	committed_lock = &GetNamedLWLockTranche(kTrancheName)->lock;
	if (!found)
		for (int i = 0; i < kSharedSlots; i++)
			committed[i].database = InvalidOid;
	LWLockRelease(AddinShmemInitLock);
}

CommittedNotify &SlotOf(const char *queue)
{
	const uint32 hash = hash_bytes(reinterpret_cast<const unsigned char *>(queue), strlen(queue)) ^ MyDatabaseId;
	return committed[hash % kSharedSlots];
}

// Whether a notification of queue committed at or after since.
bool CommittedSince(const char *queue, TimestampTz since)
{
	if (!committed)
		return false;
	LWLockAcquire(committed_lock, LW_SHARED);
	const CommittedNotify &slot = SlotOf(queue);
	const bool found = slot.database == MyDatabaseId && strcmp(slot.queue, queue) == 0 && slot.at >= since;
	LWLockRelease(committed_lock);
	return found;
}

// XACT_EVENT_COMMIT: record this transaction's notifications. Cannot fail.
void RecordCommitted()
{
	if (!committed)
		return;
	const TimestampTz now = GetCurrentTimestamp();
	LWLockAcquire(committed_lock, LW_EXCLUSIVE);
	for (int i = 0; i < pending_count; i++)
		if (pending[i].notifies) {
			CommittedNotify &slot = SlotOf(pending[i].queue);
			slot.database = MyDatabaseId;
			strlcpy(slot.queue, pending[i].queue, sizeof slot.queue);
			slot.at = now;
		}
	LWLockRelease(committed_lock);
}

// PRE_COMMIT (and PRE_PREPARE): queue the deferred NOTIFYs that are still
// needed. NOTIFY is transactional: it is sent only if the commit succeeds.
// At PREPARE it makes PREPARE fail, as an insert that stamped does
// (PostgreSQL cannot prepare a transaction that notified).
void DecideDeferred(bool preparing)
{
	for (int i = 0; i < pending_count; i++) {
		PendingNotify &entry = pending[i];
		if (!entry.deferred || entry.notifies)
			continue;
		if (preparing || !CommittedSince(entry.queue, entry.since)) {
			Async_Notify(entry.channel, "");
			entry.notifies = true;
		}
	}
}

PendingNotify *AddPending(const char *queue_name)
{
	if (pending_count == kMaxPending)
		return nullptr;
	PendingNotify &entry = pending[pending_count++];
	entry.subtransaction = GetCurrentSubTransactionId();
	strlcpy(entry.queue, queue_name, sizeof entry.queue);
	entry.channel[0] = '\0';
	return &entry;
}

void OnTransactionEvent(XactEvent event, void *)
{
	if (pending_count == 0)
		return;
	switch (event) {
	case XACT_EVENT_PRE_COMMIT:
		DecideDeferred(false);
		return;
	case XACT_EVENT_PRE_PREPARE:
		DecideDeferred(true);
		return;
	case XACT_EVENT_COMMIT:
		RecordCommitted();
		break;
	case XACT_EVENT_ABORT:
	case XACT_EVENT_PREPARE:
		break;
	default:
		return;
	}
	pending_count = 0;
}

void OnSubtransactionEvent(SubXactEvent event, SubTransactionId subtransaction, SubTransactionId parent, void *)
{
	if (event == SUBXACT_EVENT_COMMIT_SUB) {
		for (int i = 0; i < pending_count; i++)
			if (pending[i].subtransaction == subtransaction)
				pending[i].subtransaction = parent;
	} else if (event == SUBXACT_EVENT_ABORT_SUB) {
		int kept = 0;
		for (int i = 0; i < pending_count; i++)
			if (pending[i].subtransaction != subtransaction)
				pending[kept++] = pending[i];
		pending_count = kept;
	}
}

}  // namespace

void InitNotifyThrottle()
{
	if (process_shared_preload_libraries_in_progress) {
		previous_shmem_request = shmem_request_hook;
		shmem_request_hook = RequestShmem;
		previous_shmem_startup = shmem_startup_hook;
		shmem_startup_hook = StartupShmem;
	}
	RegisterXactCallback(OnTransactionEvent, nullptr);
	RegisterSubXactCallback(OnSubtransactionEvent, nullptr);
}

void NoteThrottleStamped(const char *queue_name)
{
	PendingNotify *entry = AddPending(queue_name);
	if (!entry)
		return;  // not recorded: concurrent deferred inserts just notify too
	entry->deferred = false;
	entry->notifies = true;
	entry->since = 0;
}

bool DeferThrottledNotify(const char *queue_name, const char *channel, TimestampTz since)
{
	PendingNotify *entry = AddPending(queue_name);
	if (!entry)
		return false;
	entry->deferred = true;
	entry->notifies = false;
	entry->since = since;
	strlcpy(entry->channel, channel, sizeof entry->channel);
	return true;
}

}  // namespace pgmq::pg
