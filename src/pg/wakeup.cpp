// src/pg/wakeup.cpp
// Commit-time wake-up of read_with_poll waiters (see wakeup.hpp).
//
// Shared state: one slot per backend (indexed by pgprocno) holding the keys of
// the queues it waits on (database OID and queue table OID; 0: unused; the
// table OID 0: every queue of the database),
// plus a count of waiters so senders skip the scan when nobody waits, and a
// table of the queues each prepared transaction sent to, so that COMMIT
// PREPARED (possibly in another backend, any time later) wakes their waiters.
// The commit callback runs after the commit record is written, where an ERROR
// would become a PANIC: it only reads atomics and sets latches, which cannot
// fail.
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "access/twophase.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/wait_event.h"
}

namespace pgmq::pg {

namespace {

constexpr const char *kTrancheName = "pgmq wakeup";

// Queues one backend waits on (read_multi_with_poll); more wait on every
// queue of the database.
constexpr int kKeysPerSlot = 8;

// Queues one transaction sent to (relids, in database); on overflow every
// waiter of the database is woken.
constexpr int kMaxPendingQueues = 16;
struct SentQueues {
	Oid database;
	int count;
	bool overflow;
	Oid queues[kMaxPendingQueues];
};

// What a prepared transaction sent to, until COMMIT/ROLLBACK PREPARED.
struct PreparedSends {
	char gid[GIDSIZE];  // "" when the entry is free
	SentQueues sent;
};

struct WakeupShared {
	pg_atomic_uint32 waiters;
	// Set when a PREPARE found the table full (it cannot be, unless entries
	// leaked): from then on a COMMIT PREPARED of an unknown GID wakes every
	// waiter of its database. A spurious wake-up only costs a read.
	pg_atomic_uint32 prepared_lost;
	int slot_count;
	int prepared_count;
	// kKeysPerSlot per slot, then PreparedSends[prepared_count]
	pg_atomic_uint64 waiting_on[FLEXIBLE_ARRAY_MEMBER];
};

WakeupShared *shared = nullptr;
PreparedSends *prepared = nullptr;  // in shared memory, guarded by prepared_lock
LWLock *prepared_lock = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;
ProcessUtility_hook_type previous_process_utility = nullptr;

// What this transaction sent to.
SentQueues pending = {InvalidOid, 0, false, {}};

// The GID of the PREPARE TRANSACTION this transaction is ending with, or "".
char preparing_gid[GIDSIZE];

// This backend's slot while it waits, or -1.
int my_slot = -1;

Size SlotsSize(int slots)
{
	return add_size(offsetof(WakeupShared, waiting_on), mul_size(mul_size(slots, kKeysPerSlot), sizeof(pg_atomic_uint64)));
}

Size SharedSize()
{
	return add_size(MAXALIGN(SlotsSize(MaxBackends)), mul_size(max_prepared_xacts, sizeof(PreparedSends)));
}

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
	shared = static_cast<WakeupShared *>(ShmemInitStruct("pgmq wakeup", SharedSize(), &found));
	prepared = reinterpret_cast<PreparedSends *>(reinterpret_cast<char *>(shared) + MAXALIGN(SlotsSize(MaxBackends)));
	prepared_lock = &GetNamedLWLockTranche(kTrancheName)->lock;
	if (!found) {
		pg_atomic_init_u32(&shared->waiters, 0);
		pg_atomic_init_u32(&shared->prepared_lost, 0);
		shared->slot_count = MaxBackends;
		shared->prepared_count = max_prepared_xacts;
		for (int i = 0; i < MaxBackends * kKeysPerSlot; i++)
			pg_atomic_init_u64(&shared->waiting_on[i], 0);
		for (int i = 0; i < max_prepared_xacts; i++)
			prepared[i].gid[0] = '\0';
	}
	LWLockRelease(AddinShmemInitLock);
}

// A waiter's key: database and queue table (InvalidOid: any). Never 0 (a
// database OID is never 0), which marks a free key. Exact: no two queues
// share one.
uint64 WaitKey(Oid database, Oid queue_relid) { return (static_cast<uint64>(database) << 32) | queue_relid; }

bool SentTo(const SentQueues &sent, Oid queue_relid)
{
	if (sent.overflow)
		return true;
	for (int i = 0; i < sent.count; i++)
		if (sent.queues[i] == queue_relid)
			return true;
	return false;
}

// After commit: set the latch of every backend waiting on a queue of sent.
void WakeWaiters(const SentQueues &sent)
{
	if (!shared || pg_atomic_read_u32(&shared->waiters) == 0)
		return;
	for (int i = 0; i < shared->slot_count; i++)
		for (int k = 0; k < kKeysPerSlot; k++) {
			const uint64 key = pg_atomic_read_u64(&shared->waiting_on[i * kKeysPerSlot + k]);
			if (key == 0)
				break;  // keys are filled from the first
			const Oid queue = static_cast<Oid>(key);
			if (static_cast<Oid>(key >> 32) == sent.database && (queue == InvalidOid || SentTo(sent, queue))) {
				SetLatch(&ProcGlobal->allProcs[i].procLatch);
				break;
			}
		}
}

// XACT_EVENT_PREPARE: the transaction is prepared (durably); keep what it
// sent to under its GID until COMMIT PREPARED. Cannot fail.
void RememberPrepared()
{
	if (!prepared || preparing_gid[0] == '\0')
		return;
	LWLockAcquire(prepared_lock, LW_EXCLUSIVE);
	PreparedSends *slot = nullptr;
	for (int i = 0; i < shared->prepared_count && !slot; i++)
		if (prepared[i].gid[0] == '\0' || strcmp(prepared[i].gid, preparing_gid) == 0)
			slot = &prepared[i];
	if (slot) {
		strlcpy(slot->gid, preparing_gid, sizeof slot->gid);
		slot->sent = pending;
	} else
		pg_atomic_write_u32(&shared->prepared_lost, 1);
	LWLockRelease(prepared_lock);
}

// After COMMIT PREPARED (commit = true) or ROLLBACK PREPARED of gid returned:
// forget its entry, and on commit wake its waiters.
void FinishPrepared(const char *gid, bool commit)
{
	if (!prepared)
		return;
	SentQueues sent = {MyDatabaseId, 0, false, {}};
	bool found = false;
	LWLockAcquire(prepared_lock, LW_EXCLUSIVE);
	for (int i = 0; i < shared->prepared_count && !found; i++)
		if (strcmp(prepared[i].gid, gid) == 0) {
			sent = prepared[i].sent;
			prepared[i].gid[0] = '\0';
			found = true;
		}
	LWLockRelease(prepared_lock);
	if (!commit)
		return;
	if (!found) {
		if (pg_atomic_read_u32(&shared->prepared_lost) == 0)
			return;  // it sent nothing
		sent.overflow = true;
	}
	WakeWaiters(sent);
}

// Sees PREPARE TRANSACTION (to learn the GID) and COMMIT/ROLLBACK PREPARED.
// A POD frame: the standard function may ereport through it.
void WakeupProcessUtility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                          ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                          DestReceiver *dest, QueryCompletion *qc)
{
	const TransactionStmt *transaction =
		IsA(pstmt->utilityStmt, TransactionStmt) ? castNode(TransactionStmt, pstmt->utilityStmt) : nullptr;
	if (transaction && transaction->kind == TRANS_STMT_PREPARE)
		strlcpy(preparing_gid, transaction->gid, sizeof preparing_gid);
	if (previous_process_utility)
		previous_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
	else
		standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
	// Returned: the prepared transaction is committed (visible to new
	// snapshots) or rolled back.
	if (transaction && transaction->kind == TRANS_STMT_COMMIT_PREPARED)
		FinishPrepared(transaction->gid, true);
	else if (transaction && transaction->kind == TRANS_STMT_ROLLBACK_PREPARED)
		FinishPrepared(transaction->gid, false);
}

bool AnythingSent() { return pending.count > 0 || pending.overflow; }

void OnTransactionEnd(XactEvent event, void *)
{
	switch (event) {
	case XACT_EVENT_COMMIT:
		if (AnythingSent())
			WakeWaiters(pending);
		break;
	case XACT_EVENT_PREPARE:
		// The outcome comes with COMMIT PREPARED: waking now would make a
		// waiter read before the messages are visible.
		if (AnythingSent())
			RememberPrepared();
		break;
	case XACT_EVENT_ABORT:
		break;
	default:
		return;
	}
	pending.count = 0;
	pending.overflow = false;
	preparing_gid[0] = '\0';
	StopWaiting();  // an ERROR during the wait skipped the normal exit
}

}  // namespace

void InitWakeup()
{
	if (process_shared_preload_libraries_in_progress) {
		previous_shmem_request = shmem_request_hook;
		shmem_request_hook = RequestShmem;
		previous_shmem_startup = shmem_startup_hook;
		shmem_startup_hook = StartupShmem;
		previous_process_utility = ProcessUtility_hook;
		ProcessUtility_hook = WakeupProcessUtility;
	}
	RegisterXactCallback(OnTransactionEnd, nullptr);
}

void StartWaiting(const QueueRef *queues, int count)
{
	if (!shared || MyProcNumber() >= shared->slot_count || count <= 0)
		return;
	// Still registered when an earlier wait in this transaction ended in an
	// error caught by a savepoint (only a top-level end unregisters): wait
	// on these queues now, or their sends would not wake us.
	const bool registered = my_slot >= 0;
	my_slot = MyProcNumber();
	pg_atomic_uint64 *keys = &shared->waiting_on[my_slot * kKeysPerSlot];
	for (int k = 0; k < kKeysPerSlot; k++) {
		uint64 key = 0;
		if (count > kKeysPerSlot)
			key = k == 0 ? WaitKey(MyDatabaseId, InvalidOid) : 0;
		else if (k < count)
			key = WaitKey(MyDatabaseId, queues[k].queue_relid);
		pg_atomic_write_u64(&keys[k], key);
	}
	if (!registered)
		pg_atomic_fetch_add_u32(&shared->waiters, 1);
}

void StopWaiting()
{
	if (my_slot < 0)
		return;
	for (int k = 0; k < kKeysPerSlot; k++)
		pg_atomic_write_u64(&shared->waiting_on[my_slot * kKeysPerSlot + k], 0);
	pg_atomic_fetch_sub_u32(&shared->waiters, 1);
	my_slot = -1;
}

bool WaitForMessages(long timeout_ms)
{
	const int events =
		WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return (events & WL_LATCH_SET) != 0;
}

void ForgetWakeups() { ResetLatch(MyLatch); }

void NoteMessagesSent(Oid queue_relid)
{
	if (!shared || pending.overflow)
		return;
	pending.database = MyDatabaseId;
	if (SentTo(pending, queue_relid))
		return;
	if (pending.count == kMaxPendingQueues)
		pending.overflow = true;
	else
		pending.queues[pending.count++] = queue_relid;
}

}  // namespace pgmq::pg
