// src/pg/wakeup.cpp
// Commit-time wake-up of read_with_poll waiters (see wakeup.hpp).
//
// Shared state: one slot per backend (indexed by pgprocno) holding the hash of
// the queue it waits on (0: not waiting), plus a count of waiters so senders
// skip the scan when nobody waits. The commit callback runs after the commit
// record is written, where an ERROR would become a PANIC: it only reads
// atomics and sets latches, which cannot fail.
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"
}

namespace pgmq::pg {

namespace {

struct WakeupShared {
	pg_atomic_uint32 waiters;
	int slot_count;
	pg_atomic_uint32 waiting_on[FLEXIBLE_ARRAY_MEMBER];
};

WakeupShared *shared = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

// Queues this transaction sent to; on overflow every waiter is woken.
constexpr int kMaxPendingQueues = 16;
uint32 pending_queues[kMaxPendingQueues];
int pending_count = 0;
bool pending_overflow = false;

// This backend's slot while it waits, or -1.
int my_slot = -1;

Size SharedSize() { return add_size(offsetof(WakeupShared, waiting_on), mul_size(MaxBackends, sizeof(pg_atomic_uint32))); }

void RequestShmem()
{
	if (previous_shmem_request)
		previous_shmem_request();
	RequestAddinShmemSpace(SharedSize());
}

void StartupShmem()
{
	if (previous_shmem_startup)
		previous_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found;
	shared = static_cast<WakeupShared *>(ShmemInitStruct("pgmq wakeup", SharedSize(), &found));
	if (!found) {
		pg_atomic_init_u32(&shared->waiters, 0);
		shared->slot_count = MaxBackends;
		for (int i = 0; i < MaxBackends; i++)
			pg_atomic_init_u32(&shared->waiting_on[i], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

uint32 QueueKey(const QueueRef &queue)
{
	// Never 0, which marks a free slot. A collision only wakes someone early.
	return hash_bytes(reinterpret_cast<const unsigned char *>(queue.queue_table), strlen(queue.queue_table)) | 1;
}

bool ShouldWake(uint32 key)
{
	if (pending_overflow)
		return true;
	for (int i = 0; i < pending_count; i++)
		if (pending_queues[i] == key)
			return true;
	return false;
}

// After commit: set the latch of every backend waiting on a queue we sent to.
void WakeWaiters()
{
	if (!shared || pg_atomic_read_u32(&shared->waiters) == 0)
		return;
	for (int i = 0; i < shared->slot_count; i++) {
		const uint32 key = pg_atomic_read_u32(&shared->waiting_on[i]);
		if (key != 0 && ShouldWake(key))
			SetLatch(&ProcGlobal->allProcs[i].procLatch);
	}
}

void OnTransactionEnd(XactEvent event, void *)
{
	switch (event) {
	case XACT_EVENT_COMMIT:
		if (pending_count > 0 || pending_overflow)
			WakeWaiters();
		[[fallthrough]];
	case XACT_EVENT_ABORT:
	case XACT_EVENT_PREPARE:
		pending_count = 0;
		pending_overflow = false;
		StopWaiting();  // an ERROR during the wait skipped the normal exit
		break;
	default:
		break;
	}
}

}  // namespace

void InitWakeup()
{
	if (process_shared_preload_libraries_in_progress) {
		previous_shmem_request = shmem_request_hook;
		shmem_request_hook = RequestShmem;
		previous_shmem_startup = shmem_startup_hook;
		shmem_startup_hook = StartupShmem;
	}
	RegisterXactCallback(OnTransactionEnd, nullptr);
}

void StartWaiting(const QueueRef &queue)
{
	if (!shared || MyProcNumber() >= shared->slot_count)
		return;
	// Still registered when an earlier wait in this transaction ended in an
	// error caught by a savepoint (only a top-level end unregisters): wait
	// on this queue now, or its sends would not wake us.
	const bool registered = my_slot >= 0;
	my_slot = MyProcNumber();
	pg_atomic_write_u32(&shared->waiting_on[my_slot], QueueKey(queue));
	if (!registered)
		pg_atomic_fetch_add_u32(&shared->waiters, 1);
}

void StopWaiting()
{
	if (my_slot < 0)
		return;
	pg_atomic_write_u32(&shared->waiting_on[my_slot], 0);
	pg_atomic_fetch_sub_u32(&shared->waiters, 1);
	my_slot = -1;
}

void WaitForMessages(long timeout_ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

void NoteMessagesSent(const QueueRef &queue)
{
	if (!shared || pending_overflow)
		return;
	const uint32 key = QueueKey(queue);
	if (ShouldWake(key))
		return;
	if (pending_count == kMaxPendingQueues)
		pending_overflow = true;
	else
		pending_queues[pending_count++] = key;
}

}  // namespace pgmq::pg
