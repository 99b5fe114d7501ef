// src/pg/stream_group.cpp
// What the consumer group entry points share (see stream_group.hpp).
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/group_row.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/stream_group.hpp"
#include "pgmq/pg/stream_plans.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
}

namespace pgmq::pg {

namespace {

// The group's row could not be locked: ERROR 42501 when row security hid it
// (a group with a reader this role may not act as), else 42704.
[[noreturn]] void NotLocked(const GroupReader &read, TimestampTz now)
{
	Datum values[3] = {read.name, read.group, Float8GetDatum(EpochSeconds(now))};
	if (ExecuteStreamStatement(read.stream, StreamStatement::GroupStateByKey, values) > 0)
		RequireReaderOfState(read);
	NoSuchGroup(read.stream, read.group);
}

}  // namespace

double EpochSeconds(TimestampTz t) { return static_cast<double>(t - SetEpochTimestamp()) / USECS_PER_SEC; }

void FoundAt(GroupReader *read, Datum ctid)
{
	read->row = *reinterpret_cast<ItemPointer>(DatumGetPointer(ctid));
	RememberGroupRow(read->stream.queue_relid, read->group, ctid);
}

Datum RowLocation(GroupReader *read) { return PointerGetDatum(&read->row); }

void RequireReaderOfState(const GroupReader &read)
{
	bool no_reader = true;
	const Datum reader = ResultValue(0, 10, NAMEOID, &no_reader);
	if (!no_reader)
		RequireGroupReader(read.stream, read.group, reader);
}

void LockGroup(GroupReader *read, TimestampTz now)
{
	FindGroupRow(read->stream.queue_relid, read->group, &read->row);
	Datum lock[3] = {read->name, read->group, RowLocation(read)};
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

uint64 AckIds(GroupReader *read, Datum ids)
{
	Datum values[5] = {read->name, read->group, ids, TimestampTzGetDatum(GetCurrentTimestamp()), RowLocation(read)};
	const uint64 acked = ExecuteStreamStatement(read->stream, StreamStatement::Ack, values);
	bool isnull = true;
	if (acked > 0)
		FoundAt(read, ResultValue(0, 2, TIDOID, &isnull));
	return acked;
}

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

void ResolveGroup(FunctionCallInfo fcinfo, GroupReader *read)
{
	RefuseDuringRecovery(fcinfo);
	ResolveStream(fcinfo, 0, &read->stream);
	RequireStreamRead(read->stream);
	read->fcinfo = fcinfo;
	read->name = PG_GETARG_DATUM(0);
	read->group = GroupArgument(fcinfo, 1);
}

}  // namespace pgmq::pg
