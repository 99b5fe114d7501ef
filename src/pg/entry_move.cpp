// src/pg/entry_move.cpp
// Not in upstream (docs/api.md): peek looks at messages without taking
// them; move and unarchive put messages, by id, into another queue or back
// from the archive. move and unarchive run their SQL once per call (rare,
// operator-driven), and announce their inserts as sends do: the target's
// head (head_hint.hpp) and its waiting pollers (wakeup.hpp) learn of them.
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/moves.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/lsyscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Runs a move or unarchive statement, build(from_table, to_table): ($1 the
// ids at argument ids_argno, a NULL array matching none, $2 now[, $3
// *source_name]) inserting into `target`. Returns how many ids it inserted
// (in SPI_tuptable). The SQL is built inside RunCore: no std::string lives
// in a frame an ERROR jumps over. Requires SPI.
uint64 RunMove(FunctionCallInfo fcinfo, std::string (*build)(std::string_view, std::string_view),
               const char *from_table, int ids_argno, const QueueRef &target, const Datum *source_name = nullptr)
{
	Oid types[3] = {INT8ARRAYOID, TIMESTAMPTZOID, TEXTOID};
	Datum values[3] = {PG_ARGISNULL(ids_argno) ? Datum(0) : PG_GETARG_DATUM(ids_argno),
	                   TimestampTzGetDatum(GetCurrentTimestamp()), source_name ? *source_name : Datum(0)};
	const char nulls[3] = {NullFlag(PG_ARGISNULL(ids_argno)), ' ', ' '};
	// Announced before the insert takes or writes an id (head_hint.hpp).
	BeginSend(target.queue_relid);
	uint64 inserted = 0;
	RunCore([&] {
		inserted = ExecuteOnce(build(from_table, target.queue_table), source_name ? 3 : 2, types, values, nulls);
	});
	EndSend();
	return inserted;
}

// UnarchiveSql with its arguments in RunMove's order (from, to).
std::string UnarchiveInto(std::string_view archive_table, std::string_view queue_table)
{
	return core::UnarchiveSql(queue_table, archive_table);
}

// The lowest id of the last result's first column.
int64 LowestId(const char *table)
{
	int64 lowest = PG_INT64_MAX;
	for (uint64 row = 0; row < SPI_processed; row++) {
		bool isnull = true;
		const Datum id = ResultValue(row, 1, INT8OID, &isnull, table);
		if (!isnull)
			lowest = Min(lowest, DatumGetInt64(id));
	}
	return lowest;
}

}  // namespace

// peek(queue_name text, qty integer DEFAULT 10, after_msg_id bigint DEFAULT 0)
// -> SETOF message_record: the first qty messages with msg_id > after_msg_id,
// visible or not, untouched (no lease, read_ct kept). Needs SELECT only; no
// write, so it also answers on a hot standby.
PGMQ_FUNCTION(pgmq_peek)
{
	QueueRef queue;
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "qty");
	RequireArgument(fcinfo, 2, "after_msg_id");
	const int64 qty = PG_GETARG_INT32(1);
	RunCore([qty] { core::CheckQuantity(qty); });
	Datum values[2] = {PG_GETARG_DATUM(2), Int64GetDatum(qty)};
	const char nulls[2] = {' ', ' '};
	SpiConnect();
	ExecutePlan(PlanFor(queue, core::Statement::Peek), values, nulls);
	EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}

// move(source text, target text, msg_ids bigint[]) -> SETOF bigint: the
// messages of source with those ids, deleted there and sent to target (new
// ids, visible now, headers kept plus x-pgmq-moved-from), in one statement.
PGMQ_FUNCTION(pgmq_move)
{
	QueueRef source;
	QueueRef target;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &source);
	RefuseStream(source);
	ResolveQueue(fcinfo, 1, &target);
	if (source.queue_relid == target.queue_relid)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("move needs two different queues")));
	VerifyTableShape(source.queue_relid, source.queue_table, TableRole::Queue);
	VerifyTableShape(target.queue_relid, target.queue_table, TableRole::Queue);
	SpiConnect();
	const Datum source_name = PG_GETARG_DATUM(0);
	if (RunMove(fcinfo, core::MoveSql, source.queue_table, 2, target, &source_name) > 0) {
		NoteFirstSentId(target.queue_relid, LowestId(target.queue_table));
		NoteMessagesSent(target);
	}
	EmitRows(fcinfo, target.queue_table);
	SpiFinish();
	return Datum(0);
}

// unarchive(queue_name text, msg_ids bigint[]) -> SETOF bigint: the archived
// messages with those ids, back in the queue with their ids, visible now.
PGMQ_FUNCTION(pgmq_unarchive)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	const Oid archive_relid = get_relname_relid(queue.archive_table, get_rel_namespace(queue.queue_relid));
	if (!OidIsValid(archive_relid))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("archive table pgmq.%s of queue \"%.*s\" does not exist", queue.archive_table,
		                       queue.name_len, queue.name)));
	VerifyTableShape(queue.queue_relid, queue.queue_table, TableRole::Queue);
	VerifyTableShape(archive_relid, queue.archive_table, TableRole::Archive);
	SpiConnect();
	if (RunMove(fcinfo, UnarchiveInto, queue.archive_table, 1, queue) > 0) {
		// Old ids, likely below the queue's head.
		NoteInsertBelowHead(queue.queue_relid, LowestId(queue.queue_table));
		NoteMessagesSent(queue);
	}
	EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}
