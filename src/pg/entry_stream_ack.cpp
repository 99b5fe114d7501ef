// src/pg/entry_stream_ack.cpp
// A consumer group's consumers ending their leases (docs/streams.md): ack
// (one id or many), set_aside (to the group's dead-letter queue) and
// release (delivered again, after a delay). Reads are in
// entry_stream_read.cpp.
#include "pgmq/pg/stream.hpp"  // includes core headers: before any postgres.h

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/stream_group.hpp"
#include "pgmq/pg/stream_plans.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// The msg_id argument argno as a one-element int8[]: ack and set_aside of
// one message take the path of many.
Datum OneIdArray(FunctionCallInfo fcinfo, int argno)
{
	Datum id = PG_GETARG_DATUM(argno);
	return PointerGetDatum(construct_array(&id, 1, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

}  // namespace

// ack(stream_name, group_name, msg_id bigint) -> boolean. A NULL id matches
// no message.
PGMQ_FUNCTION(pgmq_ack)
{
	GroupReader read;
	ResolveGroup(fcinfo, &read);
	if (PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	const Datum ids = OneIdArray(fcinfo, 2);
	SpiConnect();
	uint64 acked = 0;
	InStreamScope([&] {
		LockGroup(&read, GetCurrentTimestamp());
		acked = AckIds(&read, ids);
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
	const Datum ids = OneIdArray(fcinfo, 2);
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
		Datum values[4] = {read.name, read.group, PG_GETARG_DATUM(2), RowLocation(&read)};
		ExecuteStreamStatement(read.stream, StreamStatement::LeaseOf, values);
		if (SPI_processed == 0)
			return;
		bool isnull = true;
		const int32 deliveries = DatumGetInt32(ResultValue(0, 1, INT4OID, &isnull));
		SetAside(read, dead_letter, ids, reason, deliveries);
		held = AckIds(&read, ids) > 0;
	});
	SpiFinish();
	PG_RETURN_BOOL(held);
}

// release(stream_name, group_name, msg_id, delay_seconds) -> boolean: whether
// the group held a lease on the message, which a read delivers again once
// delay_seconds have passed (see core::ReleaseSql).
PGMQ_FUNCTION(pgmq_release)
{
	GroupReader read;
	ResolveGroup(fcinfo, &read);
	RequireArgument(fcinfo, 3, "delay_seconds");
	const int32 delay_seconds = PG_GETARG_INT32(3);
	if (delay_seconds < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("delay_seconds must not be negative")));
	if (PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	uint64 released = 0;
	SpiConnect();
	InStreamScope([&] {
		const TimestampTz now = GetCurrentTimestamp();
		LockGroup(&read, now);
		Datum values[5] = {read.name, read.group, PG_GETARG_DATUM(2),
		                   Float8GetDatum(EpochSeconds(SecondsFromNow(now, delay_seconds))), RowLocation(&read)};
		released = ExecuteStreamStatement(read.stream, StreamStatement::Release, values);
		bool isnull = true;
		if (released > 0)
			FoundAt(&read, ResultValue(0, 1, TIDOID, &isnull));
	});
	SpiFinish();
	PG_RETURN_BOOL(released > 0);
}
