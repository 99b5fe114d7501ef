// src/pg/head_senders.cpp
// Sender slots (head_table.hpp): a transaction that inserts into a queue
// table through pgmq announces the queue in its backend's slot before its
// insert takes an id, with the lowest id it inserted once known, until it
// ends. A refresh reads the slots, so that it never raises a head past an
// id taken before its snapshot but committed after it.
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/head_senders.hpp"

namespace pgmq::pg {

namespace head {

namespace {

// This backend's transaction: how many keys its slot holds, whether it
// overflowed, and whether a statement BeginSend announced is running.
int my_sends = 0;
bool my_overflow = false;
bool announced_statement = false;
// Per key of the slot: an old id was inserted while its bound was "not
// known", which then is all that bounds it. The first new id a send notes
// later must not replace it (it is above the old id): the bound stays "not
// known" until the transaction ends.
bool my_old_id_unrecorded[kSendsPerSlot];

// Puts key in this transaction's slot with the bound low (kUnknown: not
// known yet), before any id it bounds is taken or written; or, beyond
// kSendsPerSlot queues, marks the transaction as sending to all of them.
void Announce(SendingSlot *slot, uint64 key, int64 low)
{
	if (my_overflow)
		return;
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key)
			return;
	if (my_sends == kSendsPerSlot) {
		pg_atomic_write_u32(&slot->all_queues_of, MyDatabaseId);
		my_overflow = true;
		pg_memory_barrier();
		return;
	}
	pg_atomic_write_u64(&slot->low[my_sends], AsBits(low));
	my_old_id_unrecorded[my_sends] = false;
	pg_write_barrier();
	pg_atomic_write_u64(&slot->key[my_sends], key);
	my_sends++;
	pg_memory_barrier();
}

}  // namespace

void EndSends(bool committed)
{
	announced_statement = false;
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

}  // namespace head

using namespace head;

void BeginSend(Oid queue_relid)
{
	announced_statement = true;
	SendingSlot *slot = MySlot();
	// Announced before the insert takes its first id.
	if (slot && OidIsValid(queue_relid))
		Announce(slot, KeyOf(queue_relid), kUnknown);
}

void EndSend() { announced_statement = false; }

void NoteInsertBelowHead(Oid queue_relid, int64 msg_id)
{
	SendingSlot *slot = MySlot();
	if (!slot)
		return;
	const uint64 key = KeyOf(queue_relid);
	// The slot first: a refresh that reads the generation after the bump
	// below reads the slot after it too, so its bound is at most msg_id; one
	// that read it before keeps a raise the bump voids. "Not known" stays: it
	// already forbids every raise, and is kept from now on.
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key) {
			if (AsInt64(pg_atomic_read_u64(&slot->low[k])) == kUnknown)
				my_old_id_unrecorded[k] = true;
			else
				LowerTo(&slot->low[k], msg_id);
		}
	pg_memory_barrier();
	LWLockAcquire(entries_lock, LW_SHARED);
	if (QueueHeadEntry *entry = FindEntry(key))
		VoidRaisesBelow(entry, msg_id);
	LWLockRelease(entries_lock);
}

bool InsertNeedsHeadNote() { return !announced_statement && MySlot() != nullptr; }

void NoteRowInserted(Oid queue_relid, int64 msg_id)
{
	SendingSlot *slot = MySlot();
	if (!slot || announced_statement)
		return;
	// The id was taken or written before this note, so a refresh may have
	// passed it already: an old id. The queue is announced with it as bound
	// when it was not yet (a bound already there is lowered to it).
	Announce(slot, KeyOf(queue_relid), msg_id);
	NoteInsertBelowHead(queue_relid, msg_id);
}

void NoteFirstSentId(Oid queue_relid, int64 msg_id)
{
	SendingSlot *slot = MySlot();
	if (!slot)
		return;
	const uint64 key = KeyOf(queue_relid);
	for (int k = 0; k < my_sends; k++)
		if (pg_atomic_read_u64(&slot->key[k]) == key && AsInt64(pg_atomic_read_u64(&slot->low[k])) == kUnknown &&
		    !my_old_id_unrecorded[k])
			pg_atomic_write_u64(&slot->low[k], AsBits(msg_id));
}

}  // namespace pgmq::pg
