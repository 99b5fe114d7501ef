// src/pg/entry_stream_read.cpp
// A consumer group reading a stream (docs/streams.md): read_stream and
// read_stream_with_poll lease the group's next messages (an expired lease
// first), ack ends leases, set_aside copies a message to the group's
// dead-letter queue. A paused stream's reads return nothing. A read looks
// first without the group's lock, so an empty read takes no transaction id
// and no lock; then it reads under the lock (see ReadAttempt).
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/group_row.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/stream_plans.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

struct GroupReader {
	FunctionCallInfo fcinfo;
	QueueRef stream;
	Datum name;
	Datum group;
	int32 vt_seconds;
	int32 qty;
	bool paused;  // seen paused: read the policy row again (a resume wakes before its invalidation)
	ItemPointerData row;  // where the group's row was last found or written (group_row.hpp)
};

double EpochSeconds(TimestampTz t) { return static_cast<double>(t - SetEpochTimestamp()) / USECS_PER_SEC; }

// The group's row is at ctid (a tid Datum), found or written by the last
// statement: its later statements select it there.
void FoundAt(GroupReader *read, Datum ctid)
{
	read->row = *reinterpret_cast<ItemPointer>(DatumGetPointer(ctid));
	RememberGroupRow(read->stream.queue_relid, read->group, ctid);
}

Datum RowLocation(GroupReader *read) { return PointerGetDatum(&read->row); }

// ERROR 42501 unless the current role may read as the group, whose state
// (GroupStateSql) is the last result.
void RequireReaderOfState(const GroupReader &read)
{
	bool no_reader = true;
	const Datum reader = ResultValue(0, 10, NAMEOID, &no_reader);
	if (!no_reader)
		RequireGroupReader(read.stream, read.group, reader);
}

// The group's row could not be locked: ERROR 42501 when row security hid it
// (a group with a reader this role may not act as), else 42704.
[[noreturn]] void NotLocked(const GroupReader &read, TimestampTz now)
{
	Datum values[3] = {read.name, read.group, Float8GetDatum(EpochSeconds(now))};
	if (ExecuteStreamStatement(read.stream, StreamStatement::GroupStateByKey, values) > 0)
		RequireReaderOfState(read);
	NoSuchGroup(read.stream, read.group);
}


// Runs fn (a POD frame returning bool) in a subtransaction, kept when fn
// returns true and rolled back (its row locks released) when it returns
// false. An error rolls it back and is raised again.
template <typename Fn>
bool KeptIfTrue(Fn &&fn)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool kept = false;
	BeginInternalSubTransaction(nullptr);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		kept = fn();
		if (kept)
			ReleaseCurrentSubTransaction();
		else
			RollbackAndReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		ErrorData *error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(context);
		CurrentResourceOwner = owner;
		ReThrowError(error);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return kept;
}

// Locks the group row (LockGroupSql: where this session last saw it, else
// by key), then reads its state (GroupStateSql) into the last result;
// ERROR when there is no such group.
void LockGroup(GroupReader *read, TimestampTz now)
{
	Datum lock[3] = {read->name, read->group, GroupRowLocation(read->stream.queue_relid, read->group)};
	if (ExecuteStreamStatement(read->stream, StreamStatement::LockGroup, lock) == 0 &&
	    ExecuteStreamStatement(read->stream, StreamStatement::LockGroupByKey, lock) == 0)
		NotLocked(*read, now);
	bool isnull = true;
	FoundAt(read, ResultValue(0, 1, TIDOID, &isnull));
	// Locked: the row stays where it is until this transaction changes it.
	Datum values[4] = {read->name, read->group, Float8GetDatum(EpochSeconds(now)), RowLocation(read)};
	ExecuteStreamStatement(read->stream, StreamStatement::GroupState, values);
	RequireReaderOfState(*read);
	bool no_dead_letter = true;
	const Datum dead_letter = ResultValue(0, 3, TEXTOID, &no_dead_letter);
	if (!no_dead_letter)
		RequireDeadLetterSend(read->stream, read->group, dead_letter);
}

// Ends the group's leases on ids (int8[]); the ids it held are the last
// result's first column. The group row must be locked.
uint64 AckIds(GroupReader *read, Datum ids)
{
	Datum values[5] = {read->name, read->group, ids, TimestampTzGetDatum(GetCurrentTimestamp()), RowLocation(read)};
	const uint64 acked = ExecuteStreamStatement(read->stream, StreamStatement::Ack, values);
	bool isnull = true;
	if (acked > 0)
		FoundAt(read, ResultValue(0, 2, TIDOID, &isnull));
	return acked;
}

// Copies the messages ids (int8[]) to the dead-letter queue `dead_letter`
// (text) with the group, the reason (NULL: none) and their deliveries.
void SetAside(const GroupReader &read, Datum dead_letter, Datum ids, Datum reason, int32 deliveries)
{
	QueueRef target;
	ResolveQueueName(DatumGetTextPP(dead_letter), &target);
	RefuseStream(target);
	VerifyTableShape(target.queue_relid, target.queue_table, TableRole::Queue);
	Oid types[6] = {INT8ARRAYOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, INT4OID};
	Datum values[6] = {ids, read.name, read.group, TimestampTzGetDatum(GetCurrentTimestamp()), reason,
	                   Int32GetDatum(deliveries)};
	const char nulls[6] = {' ', ' ', ' ', ' ', NullFlag(reason == Datum(0)), ' '};
	BeginSend(target.queue_relid);  // inserts into the queue, as a send (head_hint.hpp)
	RunCore([&] {
		ExecuteOnce(core::SetAsideSql(read.stream.queue_table, target.queue_table), 6, types, values, nulls);
	});
	EndSend();
	NoteMessagesSent(target);
}

// Emits the leased messages ids (int8[]) as message_record rows.
uint64 Emit(const GroupReader &read, Datum ids, int32 read_ct, TimestampTz now, TimestampTz vt)
{
	Datum values[4] = {ids, Int32GetDatum(read_ct), TimestampTzGetDatum(now), TimestampTzGetDatum(vt)};
	const uint64 rows = ExecuteStreamStatement(read.stream, StreamStatement::Emit, values);
	if (rows > 0)
		EmitRows(read.fcinfo, read.stream.queue_table);
	return rows;
}

// The group's next messages (window `cut` or not, WindowMessagesSql): true
// with their row in the last result, false when there are none, or when
// the group's row was not where the reader last found it (*moved).
bool NextInWindow(GroupReader *read, bool cut, bool *moved)
{
	Datum values[4] = {read->name, read->group, Int32GetDatum(read->qty), RowLocation(read)};
	ExecuteStreamStatement(read->stream, cut ? StreamStatement::WindowCut : StreamStatement::Window, values);
	bool isnull = true;
	*moved = !DatumGetBool(ResultValue(0, 5, BOOLOID, &isnull));
	(void) ResultValue(0, 1, INT8ARRAYOID, &isnull);
	return !isnull;
}

// Delivers the group's first expired lease again (the group row locked,
// its columns in the last result), or sets it aside at max_deliveries.
// Returns whether it emitted rows; when not, the lease has ended.
bool Redeliver(GroupReader *read, TimestampTz now, TimestampTz vt)
{
	bool isnull = true;
	bool no_max = true;
	const int32 max_deliveries = DatumGetInt32(ResultValue(0, 2, INT4OID, &no_max));
	bool no_dead_letter = true;
	const Datum dead_letter = ResultValue(0, 3, TEXTOID, &no_dead_letter);
	const Datum batch = ResultValue(0, 5, INT8OID, &isnull);
	const int32 deliveries = DatumGetInt32(ResultValue(0, 6, INT4OID, &isnull));
	const Datum ids = ResultValue(0, 7, INT8ARRAYOID, &isnull);
	if (!no_max && deliveries >= max_deliveries) {
		if (!no_dead_letter)
			SetAside(*read, dead_letter, ids, CStringGetTextDatum(core::kDeliveryLimitReason), deliveries);
		AckIds(read, ids);
		return false;
	}
	Datum values[6] = {read->name, read->group, batch, Float8GetDatum(EpochSeconds(vt)), TimestampTzGetDatum(now),
	                   RowLocation(read)};
	ExecuteStreamStatement(read->stream, StreamStatement::Renew, values);
	FoundAt(read, ResultValue(0, 2, TIDOID, &isnull));
	if (Emit(*read, ids, deliveries + 1, now, vt) > 0)
		return true;
	// Gone (its partition reclaimed at max_retention): the lease goes too.
	AckIds(read, ids);
	return false;
}

// Whether a read would find something: an expired lease, or messages after
// the group's position (unless an ordered group has a lease out). Reads
// only, without the group's lock: an empty read takes no transaction id
// (a lock on the row would take one, and a subtransaction's too). True too
// when the group's row moved meanwhile (another reader changed it): the
// read under the lock decides.
bool HasWork(GroupReader *read, TimestampTz now)
{
	Datum values[4] = {read->name, read->group, Float8GetDatum(EpochSeconds(now)),
	                   GroupRowLocation(read->stream.queue_relid, read->group)};
	if (ExecuteStreamStatement(read->stream, StreamStatement::GroupState, values) == 0 &&
	    ExecuteStreamStatement(read->stream, StreamStatement::GroupStateByKey, values) == 0)
		NoSuchGroup(read->stream, read->group);
	bool isnull = true;
	FoundAt(read, ResultValue(0, 9, TIDOID, &isnull));
	RequireReaderOfState(*read);
	bool none_expired = true;
	(void) ResultValue(0, 5, INT8OID, &none_expired);
	if (!none_expired)
		return true;
	if (DatumGetBool(ResultValue(0, 1, BOOLOID, &isnull)) && DatumGetInt32(ResultValue(0, 4, INT4OID, &isnull)) > 0)
		return false;
	if (DatumGetBool(ResultValue(0, 8, BOOLOID, &isnull)))
		return true;  // to be anchored (AnchorSql)
	bool moved = false;
	return NextInWindow(read, false, &moved) || moved || NextInWindow(read, true, &moved) || moved;
}

// Leases the messages of the last result (NextInWindow) to the group and
// emits them.
void LeaseNext(GroupReader *read, TimestampTz now, TimestampTz vt)
{
	bool isnull = true;
	const Datum ids = ResultValue(0, 1, INT8ARRAYOID, &isnull);
	const Datum position_xid = ResultValue(0, 2, XID8OID, &isnull);
	const Datum position_id = ResultValue(0, 3, INT8OID, &isnull);
	bool no_cut = true;
	const Datum cut = ResultValue(0, 4, PG_SNAPSHOTOID, &no_cut);
	Datum values[9] = {read->name, read->group, ids, Float8GetDatum(EpochSeconds(vt)), cut, position_xid,
	                   position_id, TimestampTzGetDatum(now), RowLocation(read)};
	const char nulls[9] = {' ', ' ', ' ', ' ', NullFlag(no_cut), ' ', ' ', ' ', ' '};
	if (ExecuteStreamStatement(read->stream, StreamStatement::RecordLease, values, nulls) == 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq: the locked consumer group row was not found")));
	FoundAt(read, ResultValue(0, 1, TIDOID, &isnull));
	Emit(*read, ids, 1, now, vt);
}

// One read under the group's lock: an expired lease again, else the next
// messages as a new lease (none while an ordered group has a lease out).
// Sets *emitted when it emitted rows, *changed when it changed the group
// (also by setting a lease aside at max_deliveries).
void ReadLocked(GroupReader *read, bool *emitted, bool *changed)
{
	// Each round either emits, or ends a lease (set aside or gone).
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		const TimestampTz now = GetCurrentTimestamp();
		const TimestampTz vt = SecondsFromNow(now, read->vt_seconds);
		LockGroup(read, now);
		bool isnull = true;
		bool none_expired = true;
		(void) ResultValue(0, 5, INT8OID, &none_expired);
		if (!none_expired) {
			*changed = true;
			if (Redeliver(read, now, vt)) {
				*emitted = true;
				return;
			}
			continue;
		}
		const bool ordered = DatumGetBool(ResultValue(0, 1, BOOLOID, &isnull));
		if (ordered && DatumGetInt32(ResultValue(0, 4, INT4OID, &isnull)) > 0)
			return;
		const bool unanchored = DatumGetBool(ResultValue(0, 8, BOOLOID, &isnull));
		// Locked, the row has not moved: moved stays false.
		bool moved = false;
		if (NextInWindow(read, false, &moved) || NextInWindow(read, true, &moved)) {
			LeaseNext(read, now, vt);
			*emitted = *changed = true;
		} else if (unanchored) {
			// The window cut after a seek held nothing above its floors.
			bool no_cut = true;
			Datum values[4] = {read->name, read->group, ResultValue(0, 4, PG_SNAPSHOTOID, &no_cut), RowLocation(read)};
			if (!no_cut && ExecuteStreamStatement(read->stream, StreamStatement::Anchor, values) > 0) {
				FoundAt(read, ResultValue(0, 1, TIDOID, &isnull));
				*changed = true;
			}
		}
		return;
	}
}

// One attempt of a read: whether it emitted rows. It looks first
// (HasWork), then reads under the lock. A poll's attempt reads in a
// subtransaction rolled back when it changed nothing, so that the poll does
// not hold the group's lock while it waits; a single read (the common case,
// often acknowledged in the same transaction) needs none: a subtransaction's
// lock and its parent's update of one row make a MultiXact each time.
bool ReadAttempt(GroupReader *read, bool in_subtransaction)
{
	QueuePolicy policy;
	if (read->paused)
		ReloadPolicy(read->stream, &policy);
	else
		LoadPolicy(read->stream, &policy);
	read->paused = policy.paused;
	if (read->paused)
		return false;
	bool emitted = false;
	InStreamScope([&] {
		if (!HasWork(read, GetCurrentTimestamp()))
			return;
		if (!in_subtransaction) {
			bool changed = false;
			ReadLocked(read, &emitted, &changed);
			return;
		}
		KeptIfTrue([&] {
			bool changed = false;
			ReadLocked(read, &emitted, &changed);
			return changed;
		});
	});
	return emitted;
}

bool PollAttempt(void *context) { return ReadAttempt(static_cast<GroupReader *>(context), true); }

// read_stream and read_stream_with_poll: (stream, group, vt, qty[, poll]).
Datum ReadAsGroup(FunctionCallInfo fcinfo, bool poll)
{
	GroupReader read;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveStream(fcinfo, 0, &read.stream);
	RequireStreamRead(read.stream);
	read.fcinfo = fcinfo;
	read.name = PG_GETARG_DATUM(0);
	read.group = GroupArgument(fcinfo, 1);
	read.paused = false;
	RequireArgument(fcinfo, 2, "vt");
	RequireArgument(fcinfo, 3, "qty");
	read.vt_seconds = PG_GETARG_INT32(2);
	read.qty = PG_GETARG_INT32(3);
	RunCore([&] { core::CheckQuantity(read.qty); });
	core::PollSchedule schedule{};
	if (poll) {
		RequireArgument(fcinfo, 4, "max_poll_seconds");
		RequireArgument(fcinfo, 5, "poll_interval_ms");
		const int32 max_poll_seconds = PG_GETARG_INT32(4);
		const int32 poll_interval_ms = PG_GETARG_INT32(5);
		RunCore([&] { schedule = core::MakePollSchedule(GetCurrentTimestamp(), max_poll_seconds, poll_interval_ms); });
	}
	SpiConnect();
	if (poll)
		PollUntilClaimed(schedule, &read.stream, 1, PollAttempt, &read);
	else
		(void) ReadAttempt(&read, false);
	SpiFinish();
	return Datum(0);
}

// Resolves (stream, group) of ack and set_aside, with the right to read the
// stream they need.
void ResolveGroup(FunctionCallInfo fcinfo, GroupReader *read)
{
	RefuseDuringRecovery(fcinfo);
	ResolveStream(fcinfo, 0, &read->stream);
	RequireStreamRead(read->stream);
	read->fcinfo = fcinfo;
	read->name = PG_GETARG_DATUM(0);
	read->group = GroupArgument(fcinfo, 1);
}

}  // namespace

// read_stream(stream_name, group_name, vt, qty) -> SETOF message_record
PGMQ_FUNCTION(pgmq_read_stream) { return ReadAsGroup(fcinfo, false); }
// read_stream_with_poll(stream_name, group_name, vt, qty, max_poll_seconds,
// poll_interval_ms) -> SETOF message_record
PGMQ_FUNCTION(pgmq_read_stream_with_poll) { return ReadAsGroup(fcinfo, true); }

// ack(stream_name, group_name, msg_id bigint) -> boolean. A NULL id matches
// no message.
PGMQ_FUNCTION(pgmq_ack)
{
	GroupReader read;
	ResolveGroup(fcinfo, &read);
	if (PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	Datum id = PG_GETARG_DATUM(2);
	ArrayType *ids = construct_array(&id, 1, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	SpiConnect();
	uint64 acked = 0;
	InStreamScope([&] {
		LockGroup(&read, GetCurrentTimestamp());
		acked = AckIds(&read, PointerGetDatum(ids));
	});
	SpiFinish();
	PG_RETURN_BOOL(acked > 0);
}

// ack(stream_name, group_name, msg_ids bigint[]) -> SETOF bigint: the ids
// the group held, in order.
PGMQ_FUNCTION(pgmq_ack_ids)
{
	GroupReader read;
	BeginRowsResult(fcinfo);
	ResolveGroup(fcinfo, &read);
	if (PG_ARGISNULL(2))
		return Datum(0);
	ArrayType *ids = ArrayArgument(fcinfo, 2);
	SpiConnect();
	InStreamScope([&] {
		LockGroup(&read, GetCurrentTimestamp());
		const uint64 acked = AckIds(&read, PointerGetDatum(ids));
		auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
		for (uint64 i = 0; i < acked; i++) {
			bool isnull = true;
			Datum id = ResultValue(i, 1, INT8OID, &isnull);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
		}
	});
	SpiFinish();
	return Datum(0);
}

// set_aside(stream_name, group_name, msg_id, reason) -> boolean: whether the
// group held a lease on the message, which is now in its dead-letter queue
// and acknowledged.
PGMQ_FUNCTION(pgmq_set_aside)
{
	GroupReader read;
	ResolveGroup(fcinfo, &read);
	if (PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	Datum id = PG_GETARG_DATUM(2);
	ArrayType *ids = construct_array(&id, 1, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	const Datum reason = PG_ARGISNULL(3) ? Datum(0) : PG_GETARG_DATUM(3);
	bool held = false;
	SpiConnect();
	InStreamScope([&] {
		LockGroup(&read, GetCurrentTimestamp());
		bool no_dead_letter = true;
		const Datum dead_letter = ResultValue(0, 3, TEXTOID, &no_dead_letter);
		if (no_dead_letter)
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			                errmsg("consumer group \"%s\" has no dead-letter queue", TextDatumGetCString(read.group)),
			                errhint("Name one with pgmq.subscribe(stream_name, group_name, dead_letter_queue => "
			                        "'queue'), or acknowledge the message with pgmq.ack.")));
		Datum values[4] = {read.name, read.group, id, RowLocation(&read)};
		ExecuteStreamStatement(read.stream, StreamStatement::LeaseOf, values);
		if (SPI_processed == 0)
			return;
		bool isnull = true;
		const int32 deliveries = DatumGetInt32(ResultValue(0, 1, INT4OID, &isnull));
		SetAside(read, dead_letter, PointerGetDatum(ids), reason, deliveries);
		held = AckIds(&read, PointerGetDatum(ids)) > 0;
	});
	SpiFinish();
	PG_RETURN_BOOL(held);
}
