// src/pg/entry_dead_letters.cpp
// A consumer's failures and dead letters (docs/delivery.md): retry (try
// again after the queue's backoff, with a reason), dead_letter (set messages
// aside now, with a reason), redrive (back to the queue they came from) and
// redrive_all (every dead letter back to its own queue).
#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/policy.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "common/pg_prng.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// retry with an optional reason (argument 2): visible again after the
// queue's backoff, min(base * 2^(read_ct - 1), max) seconds times a jitter
// in [0.9, 1]; the reason joins the message's x-pgmq-failures.
Datum Retry(FunctionCallInfo fcinfo, bool with_reason)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "msg_id");
	const bool no_reason = !with_reason || PG_ARGISNULL(2);
	const Datum reason = no_reason ? Datum(0) : PG_GETARG_DATUM(2);
	SpiConnect();
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	if (!policy.retry_backoff)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("queue \"%.*s\" has no retry backoff", queue.name_len, queue.name),
		                errhint("Set one with pgmq.set_retry_backoff(queue_name, base_seconds, max_seconds), or set "
		                        "the message aside with pgmq.dead_letter(queue_name, msg_id, reason).")));
	const double jitter = core::BackoffJitter(pg_prng_double(&pg_global_prng_state));
	Datum values[6] = {PG_GETARG_DATUM(1), TimestampTzGetDatum(GetCurrentTimestamp()),
	                   Int64GetDatum(policy.retry_base_seconds), Int64GetDatum(policy.retry_max_seconds),
	                   Float8GetDatum(jitter), reason};
	const char nulls[6] = {' ', ' ', ' ', ' ', ' ', NullFlag(no_reason)};
	ExecutePlan(PlanFor(queue, core::Statement::Retry), values, nulls);
	EmitRows(fcinfo, queue.queue_table);
	SpiFinish();
	return Datum(0);
}

// dead_letter of the ids in `ids` (an int8[] Datum): moves them to the
// queue's dead-letter queue now, with the reason of argument 2 (NULL: none).
// Returns the number moved; their ids are in SPI_tuptable. Requires SPI.
uint64 DeadLetterNow(FunctionCallInfo fcinfo, const QueueRef &queue, Datum ids)
{
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	char dead_letter_table[NAMEDATALEN];
	const Oid dead_letter_relid = RequireDeadLetterQueue(queue, dead_letter_table);
	VerifyTableShape(queue.queue_relid, queue.queue_table, TableRole::Queue);
	VerifyTableShape(dead_letter_relid, dead_letter_table, TableRole::Queue);
	Oid types[4] = {INT8ARRAYOID, TIMESTAMPTZOID, TEXTOID, TEXTOID};
	Datum values[4] = {ids, TimestampTzGetDatum(GetCurrentTimestamp()), CStringGetTextDatum(policy.queue_name),
	                   PG_ARGISNULL(2) ? Datum(0) : PG_GETARG_DATUM(2)};
	const char nulls[4] = {' ', ' ', ' ', NullFlag(PG_ARGISNULL(2))};
	BeginSend(dead_letter_relid);  // inserts into the dead-letter queue, as a send (head_hint.hpp)
	uint64 moved = 0;
	RunCore([&] {
		moved = ExecuteOnce(core::DeadLetterNowSql(queue.queue_table, dead_letter_table), 4, types, values, nulls);
	});
	EndSend();
	if (moved > 0)
		NoteMessagesSent(dead_letter_relid);
	return moved;
}

// Moves up to qty (all: every) messages dead-lettered from queue `source`
// (its name as in meta) from dead_letter back to `to`, visible at once.
// Returns how many. Requires SPI.
int64 Redrive(const QueueRef &dead_letter, const QueueRef &to, bool all, int64 qty, Datum source)
{
	Oid types[3] = {INT8OID, TIMESTAMPTZOID, TEXTOID};
	Datum values[3] = {Int64GetDatum(qty), TimestampTzGetDatum(GetCurrentTimestamp()), source};
	const char nulls[3] = {NullFlag(all), ' ', ' '};
	BeginSend(to.queue_relid);  // inserts into `to`, as a send (head_hint.hpp)
	RunCore([&] { ExecuteOnce(core::RedriveSql(dead_letter.queue_table, to.queue_table), 3, types, values, nulls); });
	EndSend();
	bool isnull = true;
	const int64 moved = DatumGetInt64(ResultValue(0, 1, INT8OID, &isnull));
	if (moved > 0)
		NoteMessagesSent(to);
	return moved;
}

}  // namespace

// retry(queue_name text, msg_id bigint) -> SETOF message_record
PGMQ_FUNCTION(pgmq_retry) { return Retry(fcinfo, false); }
// retry(queue_name text, msg_id bigint, reason text) -> SETOF message_record
PGMQ_FUNCTION(pgmq_retry_reason) { return Retry(fcinfo, true); }

// dead_letter(queue_name text, msg_id bigint, reason text) -> boolean:
// whether the message was there and moved. A NULL id matches no message.
PGMQ_FUNCTION(pgmq_dead_letter)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	Datum id = PG_ARGISNULL(1) ? Datum(0) : PG_GETARG_DATUM(1);
	ArrayType *ids = construct_array(&id, PG_ARGISNULL(1) ? 0 : 1, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	SpiConnect();
	const bool moved = DeadLetterNow(fcinfo, queue, PointerGetDatum(ids)) > 0;
	SpiFinish();
	PG_RETURN_BOOL(moved);
}

// dead_letter(queue_name text, msg_ids bigint[], reason text) -> SETOF bigint:
// the ids moved.
PGMQ_FUNCTION(pgmq_dead_letter_batch)
{
	QueueRef queue;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	if (PG_ARGISNULL(1))
		return Datum(0);
	SpiConnect();
	DeadLetterNow(fcinfo, queue, PG_GETARG_DATUM(1));
	EmitRows(fcinfo);  // the statement's own bigint column
	SpiFinish();
	return Datum(0);
}

// redrive(dead_letter_queue text, queue_name text, qty integer DEFAULT NULL)
// -> bigint: moves up to qty (NULL: all) of the messages dead-lettered from
// queue_name back to it, in their original order, visible at once, with the
// headers they had before. Skips messages being read.
PGMQ_FUNCTION(pgmq_redrive)
{
	QueueRef from;
	QueueRef to;
	RefuseDuringRecovery(fcinfo);
	ResolveQueue(fcinfo, 0, &from);
	ResolveQueue(fcinfo, 1, &to);
	const bool all = PG_ARGISNULL(2);
	const int64 qty = all ? 0 : PG_GETARG_INT32(2);
	RunCore([qty] { core::CheckRedriveQuantity(qty); });
	if (from.queue_relid == to.queue_relid)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("redrive needs two different queues")));
	VerifyTableShape(from.queue_relid, from.queue_table, TableRole::Queue);
	VerifyTableShape(to.queue_relid, to.queue_table, TableRole::Queue);
	SpiConnect();
	const int64 moved = Redrive(from, to, all, qty, QueueNameAsCreated(to));
	SpiFinish();
	PG_RETURN_INT64(moved);
}

// redrive_all(dead_letter_queue text) -> TABLE(queue_name text, redriven
// bigint): every message of the dead-letter queue back to the queue it was
// dead-lettered from, one row per such queue. Messages of a queue that no
// longer exists stay, with a NOTICE.
PGMQ_FUNCTION(pgmq_redrive_all)
{
	QueueRef from;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	ResolveQueue(fcinfo, 0, &from);
	VerifyTableShape(from.queue_relid, from.queue_table, TableRole::Queue);
	SpiConnect();
	uint64 count = 0;
	RunCore([&] { count = ExecuteOnce(core::DeadLetterSourcesSql(from.queue_table)); });
	SPITupleTable *sources = SPI_tuptable;
	RequireColumnType(sources->tupdesc, 1, TEXTOID, nullptr);
	RequireColumnType(sources->tupdesc, 2, INT8OID, nullptr);
	for (uint64 i = 0; i < count; i++) {
		bool isnull = true;
		const Datum source = SPI_getbinval(sources->vals[i], sources->tupdesc, 1, &isnull);
		const int64 waiting = DatumGetInt64(SPI_getbinval(sources->vals[i], sources->tupdesc, 2, &isnull));
		QueueRef to;
		if (!FindQueueQuietly(DatumGetTextPP(source), &to) || to.queue_relid == from.queue_relid) {
			ereport(NOTICE, (errmsg("%lld messages dead-lettered from queue \"%s\" stay in \"%.*s\": that queue does "
			                        "not exist", static_cast<long long>(waiting), TextDatumGetCString(source),
			                        from.name_len, from.name)));
			continue;
		}
		VerifyTableShape(to.queue_relid, to.queue_table, TableRole::Queue);
		Datum values[2] = {source, Int64GetDatum(Redrive(from, to, true, 0, source))};
		bool nulls[2] = {false, false};
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SpiFinish();
	return Datum(0);
}
