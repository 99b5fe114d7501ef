// src/pg/entry_policy.cpp
// Delivery policies (docs/delivery.md): set_/clear_dead_letter_queue,
// set_/clear_retry_backoff, set_/clear_deduplication, set_/clear_retention,
// set_/clear_priority, pause/resume, apply_retention, and _may_send (the row policy of pgmq.deduplication). A
// policy is a row of pgmq.policies that only the queue's owner may write
// (RLS, as pgmq.meta); every change invalidates the queue table's relcache
// entry, so each backend reads the policy again (policy_cache.hpp) once the
// change commits.
#include "pgmq/core/grants.hpp"
#include "pgmq/core/policy.hpp"
#include "pgmq/core/priority.hpp"
#include "pgmq/core/queue_name.hpp"

#include <string>
#include <vector>

#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/notify.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/policy_maintenance.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "commands/trigger.h"
#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// The queue of argument 0, which the caller must own (42501 otherwise).
void ResolveOwnQueue(FunctionCallInfo fcinfo, QueueRef *queue)
{
	ResolveQueue(fcinfo, 0, queue);
	RequireRelationOwner(queue->queue_relid);
}

// Writes one policy of the queue ($3, $4 of SetPolicySql; $5 the
// dead-letter queue's table), after removing what a dropped table of the
// same name left, and tells every backend to read the queue's policy
// again. Requires SPI.
void WritePolicy(const QueueRef &queue, core::PolicyKind kind, Oid type3, Datum value3, bool null3, Oid type4,
                 Datum value4, bool null4, Oid dead_letter_relid = InvalidOid)
{
	Oid types[5] = {TEXTOID, REGCLASSOID, type3, type4, REGCLASSOID};
	Datum values[5] = {MetaQueueName(queue), ObjectIdGetDatum(queue.queue_relid), value3, value4,
	                   ObjectIdGetDatum(dead_letter_relid)};
	const char nulls[5] = {' ', ' ', NullFlag(null3), NullFlag(null4), ' '};
	const bool one_value = kind == core::PolicyKind::Deduplication || kind == core::PolicyKind::Priority ||
	                       kind == core::PolicyKind::Pause;
	const int nargs = kind == core::PolicyKind::DeadLetter ? 5 : one_value ? 3 : 4;
	RunCore([&] {
		ExecuteOnce(core::DeleteStalePolicySql(), 2, types, values);
		ExecuteOnce(core::SetPolicySql(kind), nargs, types, values, nulls);
	});
	CacheInvalidateRelcacheByRelid(queue.queue_relid);
}

// wake_readers: the queue's waiting read_with_poll calls read again once
// this transaction commits, and its LISTENing consumers are notified when
// it was paused (a resume).
Datum ClearPolicy(FunctionCallInfo fcinfo, core::PolicyKind kind, bool wake_readers = false)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	SpiConnect();
	QueuePolicy before;
	LoadPolicy(queue, &before);
	Oid types[2] = {TEXTOID, REGCLASSOID};
	Datum values[2] = {MetaQueueName(queue), ObjectIdGetDatum(queue.queue_relid)};
	RunCore([&] {
		ExecuteOnce(core::DeleteStalePolicySql(), 2, types, values);
		ExecuteOnce(core::ClearPolicySql(kind), 1, types, values);
		ExecuteOnce(core::DeleteEmptyPolicySql(), 1, types, values);
		// Without the policy nothing would expire them.
		if (kind == core::PolicyKind::Deduplication)
			ExecuteOnce(core::DeleteDeduplicationSql(), 1, types, values);
		if (kind == core::PolicyKind::Priority)
			ExecuteOnce(core::DropPriorityIndexSql(queue.queue_table));
	});
	CacheInvalidateRelcacheByRelid(queue.queue_relid);
	if (wake_readers)
		NoteMessagesSent(queue);
	if (wake_readers && before.paused)
		NotifyQueueListeners(queue);
	SpiFinish();
	PG_RETURN_VOID();
}

// An interval argument that must be positive (22023 otherwise); nullptr for
// NULL when allowed.
Interval *PositiveInterval(FunctionCallInfo fcinfo, int argno, const char *what, bool nullable)
{
	if (PG_ARGISNULL(argno)) {
		if (!nullable)
			RequireArgument(fcinfo, argno, what);
		return nullptr;
	}
	Interval *value = PG_GETARG_INTERVAL_P(argno);
	Interval zero;
	memset(&zero, 0, sizeof zero);
	if (!DatumGetBool(DirectFunctionCall2(interval_gt, IntervalPGetDatum(value), IntervalPGetDatum(&zero))) ||
	    IntervalIsInfinite(value))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a positive, finite interval", what)));
	return value;
}

// The roles that read the queue (grant_queue_access, or their own GRANT
// of UPDATE on its table) get INSERT on its new dead-letter queue: their
// reads move the messages at the delivery limit there. Requires SPI.
void GrantReadersDeadLetterInsert(const QueueRef &queue, const QueueRef &dead_letter)
{
	Oid types[2] = {REGCLASSOID, REGCLASSOID};
	Datum values[2] = {ObjectIdGetDatum(queue.queue_relid), ObjectIdGetDatum(dead_letter.queue_relid)};
	const char *dead_letter_table = quote_qualified_identifier("pgmq", dead_letter.queue_table);
	RunCore([&] {
		const uint64 rows = ExecuteOnce(core::DeadLetterReadersSql(), 2, types, values);
		if (rows == 0)
			return;
		std::vector<std::string> roles;
		bool can_grant = false;
		for (uint64 i = 0; i < rows; i++) {
			bool isnull = true;
			roles.emplace_back(CallPostgres([&] { return TextDatumGetCString(ResultValue(i, 1, TEXTOID, &isnull)); }));
			can_grant = DatumGetBool(CallPostgres([&] { return ResultValue(i, 2, BOOLOID, &isnull); }));
		}
		ExecuteOnce(core::GrantDeadLetterInsertStatement(std::string_view(queue.name, queue.name_len),
		                                                 dead_letter_table, roles, can_grant));
	});
}

}  // namespace

// set_dead_letter_queue(queue_name text, dead_letter_queue text, max_deliveries integer)
// The caller must own the queue and may insert into the dead-letter queue:
// no role can make its readers move messages where it could not put them.
PGMQ_FUNCTION(pgmq_set_dead_letter_queue)
{
	QueueRef queue;
	QueueRef dead_letter;
	ResolveOwnQueue(fcinfo, &queue);
	RefuseStream(queue);  // a stream has its own retention, order and dead letters per group
	ResolveQueue(fcinfo, 1, &dead_letter);
	RequireArgument(fcinfo, 2, "max_deliveries");
	const int32 max_deliveries = PG_GETARG_INT32(2);
	RunCore([max_deliveries] { core::CheckMaxDeliveries(max_deliveries); });
	if (dead_letter.queue_relid == queue.queue_relid)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("a queue cannot be its own dead-letter queue")));
	RequireDeadLetterInsert(dead_letter);
	VerifyTableShape(dead_letter.queue_relid, dead_letter.queue_table, TableRole::Queue);
	SpiConnect();
	const Datum dead_letter_name = MetaQueueName(dead_letter);
	WritePolicy(queue, core::PolicyKind::DeadLetter, TEXTOID, dead_letter_name, false, INT4OID,
	            Int32GetDatum(max_deliveries), false, dead_letter.queue_relid);
	GrantReadersDeadLetterInsert(queue, dead_letter);
	SpiFinish();
	PG_RETURN_VOID();
}

// clear_dead_letter_queue(queue_name text)
PGMQ_FUNCTION(pgmq_clear_dead_letter_queue) { return ClearPolicy(fcinfo, core::PolicyKind::DeadLetter); }

// set_retry_backoff(queue_name text, base_seconds integer, max_seconds integer)
PGMQ_FUNCTION(pgmq_set_retry_backoff)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	RefuseStream(queue);  // a stream has its own retention, order and dead letters per group
	RequireArgument(fcinfo, 1, "base_seconds");
	RequireArgument(fcinfo, 2, "max_seconds");
	const int32 base = PG_GETARG_INT32(1);
	const int32 max = PG_GETARG_INT32(2);
	RunCore([base, max] { core::CheckBackoff(base, max); });
	SpiConnect();
	WritePolicy(queue, core::PolicyKind::RetryBackoff, INT4OID, Int32GetDatum(base), false, INT4OID,
	            Int32GetDatum(max), false);
	SpiFinish();
	PG_RETURN_VOID();
}

// clear_retry_backoff(queue_name text)
PGMQ_FUNCTION(pgmq_clear_retry_backoff) { return ClearPolicy(fcinfo, core::PolicyKind::RetryBackoff); }

// set_deduplication(queue_name text, window interval)
PGMQ_FUNCTION(pgmq_set_deduplication)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	Interval *window = PositiveInterval(fcinfo, 1, "window", false);
	SpiConnect();
	WritePolicy(queue, core::PolicyKind::Deduplication, INTERVALOID, IntervalPGetDatum(window), false, INT4OID,
	            Datum(0), true);
	SpiFinish();
	PG_RETURN_VOID();
}

// set_priority(queue_name text, levels integer): reads take the messages
// with the highest x-pgmq-priority first; sends check the header. Builds the
// queue table's priority index (it waits for, and blocks, writes meanwhile).
PGMQ_FUNCTION(pgmq_set_priority)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	RefuseStream(queue);  // a stream has its own retention, order and dead letters per group
	RequireArgument(fcinfo, 1, "levels");
	const int32 levels = PG_GETARG_INT32(1);
	RunCore([levels] { core::CheckPriorityLevels(levels); });
	VerifyTableShape(queue.queue_relid, queue.queue_table, TableRole::Queue);
	SpiConnect();
	RunCore([&] { ExecuteOnce(core::CreatePriorityIndexSql(queue.queue_table)); });
	WritePolicy(queue, core::PolicyKind::Priority, INT4OID, Int32GetDatum(levels), false, INT4OID, Datum(0), true);
	SpiFinish();
	PG_RETURN_VOID();
}

// clear_priority(queue_name text): reads are oldest first again; drops the
// priority index.
PGMQ_FUNCTION(pgmq_clear_priority) { return ClearPolicy(fcinfo, core::PolicyKind::Priority); }

// pause(queue_name text): until resume, every read of the queue returns
// nothing; sends are accepted. Reads that started before the pause
// committed may still claim.
PGMQ_FUNCTION(pgmq_pause)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	SpiConnect();
	WritePolicy(queue, core::PolicyKind::Pause, TIMESTAMPTZOID, TimestampTzGetDatum(GetCurrentTimestamp()), false,
	            INT4OID, Datum(0), true);
	SpiFinish();
	PG_RETURN_VOID();
}

// resume(queue_name text): reads claim again, and waiting read_with_poll
// calls are woken when the resume commits.
PGMQ_FUNCTION(pgmq_resume) { return ClearPolicy(fcinfo, core::PolicyKind::Pause, true); }

// clear_deduplication(queue_name text): forgets the ids recorded so far too.
PGMQ_FUNCTION(pgmq_clear_deduplication) { return ClearPolicy(fcinfo, core::PolicyKind::Deduplication); }

// set_retention(queue_name text, max_age interval, archive_max_age interval DEFAULT NULL)
PGMQ_FUNCTION(pgmq_set_retention)
{
	QueueRef queue;
	ResolveOwnQueue(fcinfo, &queue);
	RefuseStream(queue);  // a stream has its own retention, order and dead letters per group
	Interval *max_age = PositiveInterval(fcinfo, 1, "max_age", true);
	Interval *archive_max_age = PositiveInterval(fcinfo, 2, "archive_max_age", true);
	if (!max_age && !archive_max_age)
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("max_age and archive_max_age cannot both be NULL")));
	if (max_age && get_rel_relkind(queue.queue_relid) == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("queue \"%.*s\" is partitioned: its retention is pg_partman's", queue.name_len, queue.name),
		                errhint("Set retention_interval in create_partitioned, or pass max_age NULL to set only "
		                        "archive_max_age.")));
	SpiConnect();
	WritePolicy(queue, core::PolicyKind::Retention, INTERVALOID, max_age ? IntervalPGetDatum(max_age) : Datum(0),
	            !max_age, INTERVALOID, archive_max_age ? IntervalPGetDatum(archive_max_age) : Datum(0),
	            !archive_max_age);
	SpiFinish();
	PG_RETURN_VOID();
}

// clear_retention(queue_name text)
PGMQ_FUNCTION(pgmq_clear_retention) { return ClearPolicy(fcinfo, core::PolicyKind::Retention); }

// apply_retention(queue_name text) -> bigint: the retention policy now, as
// the caller (maintenance runs it as the queue's owner), in batches that
// skip locked rows. Returns the messages and archived messages deleted.
PGMQ_FUNCTION(pgmq_apply_retention)
{
	QueueRef queue;
	ResolveQueue(fcinfo, 0, &queue);
	SpiConnect();
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	const int64 deleted = ApplyRetentionBatches(queue, policy, -1);
	SpiFinish();
	PG_RETURN_INT64(deleted);
}

// _may_send(queue_name text) -> boolean, STRICT STABLE: whether the current
// role may insert into the queue's table; the row policy of
// pgmq.deduplication. Found by the OID of schema pgmq and the name, never
// through the search_path.
PGMQ_FUNCTION(pgmq_may_send)
{
	QueueRef queue;
	if (!FindQueueQuietly(PG_GETARG_TEXT_PP(0), &queue))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(pg_class_aclcheck(queue.queue_relid, GetUserId(), ACL_INSERT) == ACLCHECK_OK);
}

// _invalidate_queue_policy(), the row trigger of pgmq.policies: any change
// of a policy row (set_*/clear_*, a direct UPDATE by the owner, the SET NULL
// when a dead-letter queue is dropped, a restore) invalidates the queue
// table's relcache entry, so every backend reads the policy again once the
// change commits.
PGMQ_FUNCTION(pgmq_invalidate_queue_policy)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("_invalidate_queue_policy() must be called as a trigger")));
	auto *trigger = reinterpret_cast<TriggerData *>(fcinfo->context);
	const Oid pgmq_namespace = get_namespace_oid("pgmq", false);
	// Its rows are read as pgmq.policies' (column 1, the queue name): any
	// other table's would be misread.
	TupleDesc columns = RelationGetDescr(trigger->tg_relation);
	if (!TRIGGER_FIRED_FOR_ROW(trigger->tg_event) ||
	    RelationGetRelid(trigger->tg_relation) != get_relname_relid("policies", pgmq_namespace) ||
	    columns->natts < 1 || TupleDescAttr(columns, 0)->atttypid != VARCHAROID)
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("_invalidate_queue_policy() must be the row trigger of pgmq.policies")));
	HeapTuple tuples[2] = {trigger->tg_trigtuple, trigger->tg_newtuple};
	for (HeapTuple tuple : tuples) {
		if (!tuple)
			continue;
		bool isnull = true;
		const Datum name = heap_getattr(tuple, 1, trigger->tg_relation->rd_att, &isnull);
		if (isnull)
			continue;
		text *name_text = DatumGetTextPP(name);
		char queue_table[NAMEDATALEN];
		char archive_table[NAMEDATALEN];
		Failure failure;
		const std::string_view view(VARDATA_ANY(name_text), VARSIZE_ANY_EXHDR(name_text));
		if (!TryCore(failure, [&] { core::WriteQueueTableNames(view, queue_table, archive_table, NAMEDATALEN); }))
			continue;
		const Oid relid = get_relname_relid(queue_table, pgmq_namespace);
		if (OidIsValid(relid))
			CacheInvalidateRelcacheByRelid(relid);
	}
	return PointerGetDatum(nullptr);
}
