// src/pg/entry_notify.cpp
// Insert notifications: enable_notify_insert, disable_notify_insert,
// update_notify_insert, and the trigger function notify_queue_listeners.
// A queue with notifications enabled has a trigger that NOTIFYs channel
// "pgmq.q_<queue name>.INSERT" when messages are inserted, at most once per
// throttle interval (its row in pgmq.notify_insert_throttle), or at its
// commit when a concurrent sender holds the row (notify_throttle.hpp). NOTIFY
// is delivered at commit and collapses within a transaction, so a committed
// batch gives one notification and a rolled-back one none. The trigger also
// tells the queue's head (head_hint.hpp) of each row that plain SQL inserts,
// so that reads find it at once.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/notify.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/notify.hpp"
#include "pgmq/pg/notify_throttle.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_type_d.h"
#include "commands/async.h"
#include "commands/trigger.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/rel.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Channels this backend has notified in the current (sub)transaction: a
// further insert there would only queue a duplicate NOTIFY, which Postgres
// collapses at commit anyway, so the throttle statement is skipped. Keyed
// by subtransaction too: an aborted subtransaction discards its NOTIFYs.
struct NotifiedChannel {
	LocalTransactionId transaction;
	SubTransactionId subtransaction;
	char channel[NAMEDATALEN];
};

constexpr int kNotifiedSlots = 8;
NotifiedChannel notified[kNotifiedSlots];
int next_notified_slot = 0;

bool AlreadyNotified(const char *channel)
{
	const SubTransactionId subtransaction = GetCurrentSubTransactionId();
	for (const NotifiedChannel &slot : notified)
		if (slot.transaction == MyLocalTransactionId() && slot.subtransaction == subtransaction &&
		    strcmp(slot.channel, channel) == 0)
			return true;
	return false;
}

void RememberNotified(const char *channel)
{
	NotifiedChannel &slot = notified[next_notified_slot];
	next_notified_slot = (next_notified_slot + 1) % kNotifiedSlots;
	slot.transaction = MyLocalTransactionId();
	slot.subtransaction = GetCurrentSubTransactionId();
	strlcpy(slot.channel, channel, sizeof slot.channel);
}

// The queue name argument (argument 0) and the interval (argument 1) as
// statement parameters.
void NameAndInterval(FunctionCallInfo fcinfo, Oid *types, Datum *values)
{
	types[0] = TEXTOID;
	types[1] = INT4OID;
	values[0] = PointerGetDatum(PG_GETARG_TEXT_PP(0));
	values[1] = PG_GETARG_DATUM(1);
}

// Drops the trigger if present and deletes the throttle row. Requires SPI.
// May ereport.
void DisableNotify(FunctionCallInfo fcinfo, const QueueRef &queue)
{
	RunCore([&] {
		ExecuteOnce(core::DropNotifyTriggerSql(queue.queue_table));
		Oid types[1] = {TEXTOID};
		Datum values[1] = {PointerGetDatum(PG_GETARG_TEXT_PP(0))};
		ExecuteOnce(core::DeleteThrottleSql(), 1, types, values);
	});
}

// What an insert does about its notification.
enum class NotifyDecision { Silent, NotifyNow, Deferred };

// Whether an insert into the queue notifies now, as its throttle row says;
// stamps the row when it does. Most inserts of a throttled queue only read
// the row (not due yet). A trigger without its row notifies, unthrottled:
// the row is in an UNLOGGED table, emptied by crash recovery, and upstream's
// trigger then goes silent until notifications are enabled again.
//
// No committed insert loses its notification: an insert is silent only when
// its snapshot shows a stamp within the interval, and a stamp is visible only
// once the transaction that made it has committed, and so notified. A row
// that is due but held by a concurrent sender, whose fate is unknown, defers
// the decision to this transaction's commit (notify_throttle.hpp). May
// ereport.
NotifyDecision DecideNotify(const char *queue_name, const char *channel)
{
	const TimestampTz now = GetCurrentTimestamp();
	Datum values[2] = {PointerGetDatum(cstring_to_text(queue_name)), TimestampTzGetDatum(now)};
	const char nulls[2] = {' ', ' '};
	NotifyDecision decision = NotifyDecision::Silent;
	SpiConnect();
	const uint64 rows = ExecutePlan(PlanFor(core::Statement::NotifyState), values, nulls);
	if (rows == 0)
		decision = NotifyDecision::NotifyNow;
	else if (rows == 1) {
		bool interval_null;
		bool last_null;
		const int32 interval_ms =
			DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &interval_null));
		const TimestampTz last =
			DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &last_null));
		if (!interval_null && !last_null && core::NotifyDue(interval_ms, last, now)) {
			// Stamp the row unless a concurrent sender holds it (never wait).
			const bool stamped = ExecutePlan(PlanFor(core::Statement::NotifyThrottle), values, nulls) == 1;
			if (interval_ms == 0)
				decision = NotifyDecision::NotifyNow;
			else if (stamped) {
				NoteThrottleStamped(queue_name);
				decision = NotifyDecision::NotifyNow;
			} else
				decision = DeferThrottledNotify(queue_name, channel, now) ? NotifyDecision::Deferred
				                                                          : NotifyDecision::NotifyNow;
		}
	}
	SpiFinish();
	return decision;
}

// The msg_id of the row the trigger fired for, when its table has that
// bigint column and the row a value there.
bool RowMsgId(const TriggerData *trigger, int64 *msg_id)
{
	const TupleDesc desc = RelationGetDescr(trigger->tg_relation);
	for (int i = 0; i < desc->natts; i++) {
		const Form_pg_attribute column = TupleDescAttr(desc, i);
		if (!column->attisdropped && column->atttypid == INT8OID && strcmp(NameStr(column->attname), "msg_id") == 0) {
			bool isnull = true;
			const Datum value = heap_getattr(trigger->tg_trigtuple, i + 1, desc, &isnull);
			*msg_id = isnull ? 0 : DatumGetInt64(value);
			return !isnull;
		}
	}
	return false;
}

// The operation a trigger fired for, as TG_OP spells it.
const char *TriggerOperation(TriggerEvent event)
{
	if (TRIGGER_FIRED_BY_INSERT(event))
		return "INSERT";
	if (TRIGGER_FIRED_BY_UPDATE(event))
		return "UPDATE";
	if (TRIGGER_FIRED_BY_DELETE(event))
		return "DELETE";
	return "TRUNCATE";
}

}  // namespace

namespace pgmq::pg {

void NotifyQueueListeners(const QueueRef &queue)
{
	char channel[2 * NAMEDATALEN];
	size_t channel_len = 0;
	Relation table = table_open(queue.queue_relid, AccessShareLock);
	const TriggerDesc *triggers = table->trigdesc;
	for (int i = 0; triggers && i < triggers->numtriggers; i++) {
		const Trigger &trigger = triggers->triggers[i];
		if (strcmp(trigger.tgname, core::kNotifyTriggerName) != 0 || trigger.tgenabled == TRIGGER_DISABLED)
			continue;
		// The channel its trigger uses (pgmq_notify_queue_listeners, below).
		const char *queue_name =
			trigger.tgnargs > 0 ? trigger.tgargs[0] : RelationGetRelationName(table) + strnlen(RelationGetRelationName(table), 2);
		channel_len = core::WriteNotifyChannel(queue_name, "INSERT", channel, sizeof channel);
		break;
	}
	table_close(table, AccessShareLock);
	if (channel_len > 0 && channel_len < sizeof channel)
		Async_Notify(channel, "");
}

}  // namespace pgmq::pg

// enable_notify_insert(queue_name text, throttle_interval_ms integer DEFAULT 250):
// (re)installs the trigger and resets the throttle row.
PGMQ_FUNCTION(pgmq_enable_notify_insert)
{
	QueueRef queue;
	ReadQueueName(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "throttle_interval_ms");
	const int32 interval_ms = PG_GETARG_INT32(1);
	RunCore([interval_ms] { core::CheckThrottleInterval(interval_ms, false); });
	if (!QueueExists(&queue))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("Queue \"%.*s\" does not exist. Create it first using pgmq.create()", queue.name_len,
		                       queue.name)));
	// A trigger already there is replaced. It is looked up under the lock
	// DROP TRIGGER takes, so a concurrent enable's trigger is seen once that
	// commits, and dropped only when present: enabling a queue prints no
	// "trigger ... does not exist, skipping" NOTICE.
	LockRelationOid(queue.queue_relid, AccessExclusiveLock);
	const bool replacing = OidIsValid(get_trigger_oid(queue.queue_relid, core::kNotifyTriggerName, true));
	SpiConnect();
	if (replacing)
		DisableNotify(fcinfo, queue);
	RunCore([&] {
		Oid types[2];
		Datum values[2];
		NameAndInterval(fcinfo, types, values);
		ExecuteOnce(core::UpsertThrottleSql(), 2, types, values);
		ExecuteOnce(core::CreateNotifyTriggerSql(queue.queue_table, std::string_view(queue.name, queue.name_len)));
	});
	SpiFinish();
	PG_RETURN_VOID();
}

// disable_notify_insert(queue_name text): drops the trigger if present and the
// throttle row; not an error when notifications were not enabled.
PGMQ_FUNCTION(pgmq_disable_notify_insert)
{
	QueueRef queue;
	ReadQueueName(fcinfo, 0, &queue);
	SpiConnect();
	DisableNotify(fcinfo, queue);
	SpiFinish();
	PG_RETURN_VOID();
}

// update_notify_insert(queue_name text, throttle_interval_ms integer): changes
// the interval of an enabled queue and resets its last notification time.
PGMQ_FUNCTION(pgmq_update_notify_insert)
{
	RequireArgument(fcinfo, 1, "throttle_interval_ms");
	const int32 interval_ms = PG_GETARG_INT32(1);
	RunCore([interval_ms] { core::CheckThrottleInterval(interval_ms, true); });
	RequireArgument(fcinfo, 0, "queue_name");
	text *name = PG_GETARG_TEXT_PP(0);
	bool in_meta = false;
	bool enabled = false;
	SpiConnect();
	RunCore([&] {
		Oid types[2];
		Datum values[2];
		NameAndInterval(fcinfo, types, values);
		in_meta = ExecuteOnce(core::QueueInMetaSql(), 1, types, values) > 0;
		enabled = in_meta && ExecuteOnce(core::FindThrottleSql(), 1, types, values) > 0;
		if (enabled)
			ExecuteOnce(core::UpdateThrottleSql(), 2, types, values);
	});
	if (!in_meta)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("Queue \"%s\" does not exist. Create the queue first using pgmq.create()",
		                       text_to_cstring(name))));
	if (!enabled)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("Queue \"%s\" does not have notify_insert enabled. Enable it first using "
		                       "pgmq.enable_notify_insert()",
		                       text_to_cstring(name))));
	SpiFinish();
	PG_RETURN_VOID();
}

// notify_queue_listeners() RETURNS trigger: the trigger enable_notify_insert
// installs. Its argument is the queue name (1.13.1); a trigger without one
// (made by an older pgmq) falls back to the table name without "q_".
PGMQ_FUNCTION(pgmq_notify_queue_listeners)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("notify_queue_listeners() must be called as a trigger")));
	auto *trigger = reinterpret_cast<TriggerData *>(fcinfo->context);
	const char *queue_name = trigger->tg_trigger->tgnargs > 0 ? trigger->tg_trigger->tgargs[0]
	                                                          : RelationGetRelationName(trigger->tg_relation);
	if (trigger->tg_trigger->tgnargs == 0)
		queue_name += strnlen(queue_name, 2);
	char channel[2 * NAMEDATALEN];
	const size_t channel_len = core::WriteNotifyChannel(queue_name, TriggerOperation(trigger->tg_event), channel,
	                                                    sizeof channel);
	if (channel_len >= sizeof channel)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("channel name too long")));
	// pgmq's own sends announced their rows already; other rows (plain SQL)
	// are told to the queue's head one by one.
	const bool note_row = TRIGGER_FIRED_BY_INSERT(trigger->tg_event) && TRIGGER_FIRED_FOR_ROW(trigger->tg_event) &&
	                      InsertNeedsHeadNote();
	const bool notified = AlreadyNotified(channel);
	if (note_row || !notified) {
		// Only on the named queue's own table (or one of its partitions):
		// attached elsewhere it would notify, and move the throttle of, a
		// queue it does not belong to.
		const Oid relid = RelationGetRelid(trigger->tg_relation);
		QueueRef queue;
		if (!FindQueueQuietly(queue_name, static_cast<int>(strlen(queue_name)), &queue) ||
		    (queue.queue_relid != relid && !(trigger->tg_relation->rd_rel->relispartition &&
		                                     list_member_oid(get_partition_ancestors(relid), queue.queue_relid))))
			ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			                errmsg("notify_queue_listeners() must be a trigger on the table of queue \"%s\"", queue_name),
			                errhint("Use pgmq.enable_notify_insert('%s').", queue_name)));
		int64 msg_id;
		if (note_row && RowMsgId(trigger, &msg_id))
			NoteRowInserted(queue.queue_relid, msg_id);
		if (!notified) {
			const NotifyDecision decision = DecideNotify(queue_name, channel);
			// pg_notify(channel, NULL) without the function call: same checks.
			if (decision == NotifyDecision::NotifyNow)
				Async_Notify(channel, "");
			if (decision != NotifyDecision::Silent)
				RememberNotified(channel);
		}
	}
	return PointerGetDatum(trigger->tg_trigtuple);
}
