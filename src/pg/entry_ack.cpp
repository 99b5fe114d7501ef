// src/pg/entry_ack.cpp
// Acting on messages by id: delete (acknowledge), archive (move to a_<queue>
// with archived_at), set_vt (extend or shorten a message's invisibility).
// These wait on rows another transaction holds; they do not skip them.
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Runs statement with the msg_id (or msg_id array) argument as $1 and, for
// set_vt, the new vt as $2. A NULL id matches no message. Requires SPI.
uint64 RunById(FunctionCallInfo fcinfo, const QueueRef &queue, core::Statement statement, TimestampTz vt)
{
	Datum values[2] = {PG_ARGISNULL(1) ? Datum(0) : PG_GETARG_DATUM(1), TimestampTzGetDatum(vt)};
	const char nulls[2] = {NullFlag(PG_ARGISNULL(1)), ' '};
	return ExecutePlan(PlanFor(queue, statement), values, nulls);
}

// delete/archive of one id: true when the message existed.
Datum ActOnOne(FunctionCallInfo fcinfo, core::Statement statement)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RefuseStream(queue);
	SpiConnect();
	const bool found = RunById(fcinfo, queue, statement, 0) > 0;
	SpiFinish();
	PG_RETURN_BOOL(found);
}

// delete/archive of an id array: the ids acted on.
Datum ActOnMany(FunctionCallInfo fcinfo, core::Statement statement)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RefuseStream(queue);
	SpiConnect();
	RunById(fcinfo, queue, statement, 0);
	// Archive returns the archive's msg_id, delete the queue's.
	const bool archive = statement == core::Statement::ArchiveBatch;
	EmitRows(fcinfo, archive ? queue.archive_table : queue.queue_table);
	SpiFinish();
	return Datum(0);
}

// set_vt, single or batch; the new vt is seconds from now or a timestamp.
Datum SetVt(FunctionCallInfo fcinfo, core::Statement statement, bool vt_is_seconds)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RefuseStream(queue);
	RequireArgument(fcinfo, 2, "vt");
	const TimestampTz vt =
		vt_is_seconds ? SecondsFromNow(GetCurrentTimestamp(), PG_GETARG_INT32(2)) : PG_GETARG_TIMESTAMPTZ(2);
	SpiConnect();
	RunById(fcinfo, queue, statement, vt);
	EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}

}  // namespace

// delete(queue_name text, msg_id bigint) -> boolean
PGMQ_FUNCTION(pgmq_delete) { return ActOnOne(fcinfo, core::Statement::Delete); }
// delete(queue_name text, msg_ids bigint[]) -> SETOF bigint
PGMQ_FUNCTION(pgmq_delete_batch) { return ActOnMany(fcinfo, core::Statement::DeleteBatch); }
// archive(queue_name text, msg_id bigint) -> boolean
PGMQ_FUNCTION(pgmq_archive) { return ActOnOne(fcinfo, core::Statement::Archive); }
// archive(queue_name text, msg_ids bigint[]) -> SETOF bigint
PGMQ_FUNCTION(pgmq_archive_batch) { return ActOnMany(fcinfo, core::Statement::ArchiveBatch); }

// set_vt(queue_name text, msg_id bigint, vt integer)
PGMQ_FUNCTION(pgmq_set_vt) { return SetVt(fcinfo, core::Statement::SetVt, true); }
// set_vt(queue_name text, msg_id bigint, vt timestamptz)
PGMQ_FUNCTION(pgmq_set_vt_at) { return SetVt(fcinfo, core::Statement::SetVt, false); }
// set_vt(queue_name text, msg_ids bigint[], vt integer)
PGMQ_FUNCTION(pgmq_set_vt_batch) { return SetVt(fcinfo, core::Statement::SetVtBatch, true); }
// set_vt(queue_name text, msg_ids bigint[], vt timestamptz)
PGMQ_FUNCTION(pgmq_set_vt_batch_at) { return SetVt(fcinfo, core::Statement::SetVtBatch, false); }
