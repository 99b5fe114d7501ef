// src/pg/entry_stream_read.cpp
// A consumer group reading a stream (docs/streams.md): read_stream and
// read_stream_with_poll lease the group's next messages (an expired lease
// first); acknowledgements are in entry_stream_ack.cpp. A paused stream's
// reads return nothing. A read looks first without the group's lock, so an
// empty read takes no transaction id and no lock; then it reads under the
// lock (see ReadAttempt).
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/group_row.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/stream_group.hpp"
#include "pgmq/pg/stream_plans.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

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
	FindGroupRow(read->stream.queue_relid, read->group, &read->row);
	Datum values[4] = {read->name, read->group, Float8GetDatum(EpochSeconds(now)), RowLocation(read)};
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

}  // namespace

// read_stream(stream_name, group_name, vt, qty) -> SETOF message_record
PGMQ_FUNCTION(pgmq_read_stream) { return ReadAsGroup(fcinfo, false); }
// read_stream_with_poll(stream_name, group_name, vt, qty, max_poll_seconds,
// poll_interval_ms) -> SETOF message_record
PGMQ_FUNCTION(pgmq_read_stream_with_poll) { return ReadAsGroup(fcinfo, true); }

