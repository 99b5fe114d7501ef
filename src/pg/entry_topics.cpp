// src/pg/entry_topics.cpp
// Topic routing: validate_routing_key, validate_topic_pattern, bind_topic,
// unbind_topic, send_topic and send_batch_topic (every overload),
// _validate_batch_params, and the pattern -> regex function behind the
// generated column topic_bindings.compiled_regex. A binding (pattern, queue)
// routes every message sent to a matching routing key into that queue; the
// rules live in the core (include/pgmq/core/topic.hpp).
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/statements.hpp"
#include "pgmq/core/topic.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/table_trust.hpp"
#include "pgmq/pg/stream_result.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Text argument argno as a view of its bytes; NULL reads as empty, which
// every topic rule rejects with the same message as NULL.
std::string_view TextArgument(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		return {};
	text *value = PG_GETARG_TEXT_PP(argno);
	return {VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value)};
}

// ERROR "<what> cannot be NULL or empty" for a NULL or empty text argument.
void RequireNonEmpty(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (TextArgument(fcinfo, argno).empty())
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s cannot be NULL or empty", what)));
}

// ERROR 42501 unless the caller may change the bindings of the queue named
// by argument argno: it owns the queue's table, or it is not subject to the
// row-level security of pgmq.topic_bindings (its owner, a superuser), whose
// policies say the same. Run before writing, for a clear message.
void RequireBindingRights(FunctionCallInfo fcinfo, int argno)
{
	const Oid bindings = get_relname_relid("topic_bindings", get_namespace_oid("pgmq", false));
	if (check_enable_rls(bindings, InvalidOid, true) != RLS_ENABLED)
		return;
	text *name = PG_GETARG_TEXT_PP(argno);
	QueueRef queue;
	if (!FindQueueQuietly(name, &queue) || !OwnsQueueTable(queue.queue_relid))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to change the topic bindings of queue \"%s\"", text_to_cstring(name)),
		                errdetail("Only the owner of the queue's table may bind and unbind it.")));
}

void CheckRoutingKeyArgument(FunctionCallInfo fcinfo)
{
	const std::string_view key = TextArgument(fcinfo, 0);
	RunCore([key] { core::CheckRoutingKey(key); });
}

// Appends value to the text[] literal in buf as a quoted element.
void AppendArrayElement(StringInfo buf, const char *value, int len)
{
	appendStringInfoChar(buf, buf->len > 0 ? ',' : '{');
	appendStringInfoChar(buf, '"');
	for (int i = 0; i < len; i++) {
		if (value[i] == '"' || value[i] == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, value[i]);
	}
	appendStringInfoChar(buf, '"');
}

std::string_view TextView(Datum value)
{
	text *t = DatumGetTextPP(value);
	return {VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)};
}

// The queues bound to a pattern that matches the routing key (argument 0),
// as a text[] literal: the send statements' $1. Matched in C++ (the core's
// TopicPatternMatches), so no regex is compiled per binding; a binding whose
// stored compiled_regex is not its pattern's is matched by PostgreSQL's
// regex, as before. Bindings are read in the caller's snapshot, with the
// caller's privileges, on every call: nothing to invalidate. Requires SPI.
// May ereport.
Datum MatchingQueues(FunctionCallInfo fcinfo)
{
	// Prepared once per backend; PostgreSQL's plan cache revalidates it.
	static SPIPlanPtr bindings_plan = nullptr;
	if (!bindings_plan) {
		SPIPlanPtr plan = SPI_prepare(core::TopicBindingsSql(), 0, nullptr);
		if (!plan)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
			                errmsg("pgmq statement failed: %s", SPI_result_code_string(SPI_result))));
		if (SPI_keepplan(plan) != 0)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_keepplan failed")));
		bindings_plan = plan;
	}
	const Datum key_datum = PG_GETARG_DATUM(0);
	const std::string_view key = TextArgument(fcinfo, 0);
	StringInfoData queues;
	initStringInfo(&queues);
	const uint64 rows = ExecutePlan(bindings_plan, nullptr, nullptr);
	Oid *relids = static_cast<Oid *>(palloc(sizeof(Oid) * Max(rows, 1)));
	char **names = static_cast<char **>(palloc(sizeof(char *) * Max(rows, 1)));
	int candidates = 0;
	TupleDesc desc = SPI_tuptable->tupdesc;
	// The columns are read as text below: refuse a table altered otherwise.
	bool all_text = desc->natts == 3;
	for (int column = 0; all_text && column < 3; column++)
		all_text = TupleDescAttr(desc, column)->atttypid == TEXTOID;
	if (!all_text)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq.topic_bindings does not have the columns pgmq expects"),
		                errdetail("pattern, queue_name and compiled_regex must be of type text.")));
	for (uint64 i = 0; i < rows; i++) {
		HeapTuple row = SPI_tuptable->vals[i];
		bool pattern_null;
		bool queue_null;
		bool regex_null;
		const Datum pattern_datum = SPI_getbinval(row, desc, 1, &pattern_null);
		const Datum queue_datum = SPI_getbinval(row, desc, 2, &queue_null);
		const Datum regex_datum = SPI_getbinval(row, desc, 3, &regex_null);
		if (pattern_null || queue_null || regex_null)
			continue;  // NOT NULL columns; a NULL regex matches nothing, as `~` does
		const std::string_view pattern = TextView(pattern_datum);
		const bool matches =
			core::IsTopicPatternRegex(pattern, TextView(regex_datum))
				? core::TopicPatternMatches(pattern, key)
				: DatumGetBool(DirectFunctionCall2Coll(textregexeq, DEFAULT_COLLATION_OID, key_datum, regex_datum));
		// Only into queues the sender may send to: another role's binding
		// cannot make this send fail.
		QueueRef queue;
		if (matches && FindQueueQuietly(DatumGetTextPP(queue_datum), &queue) &&
		    pg_class_aclcheck(queue.queue_relid, GetUserId(), ACL_INSERT) == ACLCHECK_OK) {
			relids[candidates] = queue.queue_relid;
			names[candidates++] = pnstrdup(queue.name, queue.name_len);
		}
	}
	SPI_freetuptable(SPI_tuptable);
	// Nor into queues whose tables would run their owner's code as the
	// sender (table_trust.hpp): a tenant binding its trapped queue to '#'
	// would fail everyone's sends. pgmq.send checks again under its lock.
	ForeignCode *refused = static_cast<ForeignCode *>(palloc(sizeof(ForeignCode) * Max(candidates, 1)));
	const int nrefused = candidates == 0 ? 0 : CheckTables(relids, candidates, refused);
	for (int i = 0; i < candidates; i++) {
		bool skip = false;
		for (int j = 0; j < nrefused && !skip; j++)
			skip = refused[j].relid == relids[i];
		if (!skip)
			AppendArrayElement(&queues, names[i], static_cast<int>(strlen(names[i])));
	}
	if (queues.len == 0)
		appendStringInfoChar(&queues, '{');
	appendStringInfoChar(&queues, '}');
	return PointerGetDatum(cstring_to_text_with_len(queues.data, queues.len));
}

// send_topic(routing_key, msg, [headers], [delay integer]) -> number of
// queues the message went to.
Datum SendTopic(FunctionCallInfo fcinfo, const SendArgs &args)
{
	CheckRoutingKeyArgument(fcinfo);
	const bool msg_null = PG_ARGISNULL(1);
	const bool has_delay = args.delay_seconds >= 0 && !PG_ARGISNULL(args.delay_seconds);
	const int32 delay = has_delay ? PG_GETARG_INT32(args.delay_seconds) : 0;
	RunCore([&] { core::CheckTopicSend(msg_null, delay); });
	const bool headers_null = args.headers < 0 || PG_ARGISNULL(args.headers);
	Datum values[4] = {Datum(0), PG_GETARG_DATUM(1), headers_null ? Datum(0) : PG_GETARG_DATUM(args.headers),
	                   TimestampTzGetDatum(SendVisibleAt(fcinfo, args))};
	const char nulls[4] = {' ', ' ', NullFlag(headers_null), ' '};
	int64 sent = 0;
	SpiConnect();
	values[0] = MatchingQueues(fcinfo);
	if (ExecutePlan(PlanFor(core::Statement::SendTopic), values, nulls) == 1) {
		bool isnull;
		sent = DatumGetInt64(ResultValue(0, 1, INT8OID, &isnull));
	}
	SpiFinish();
	PG_RETURN_INT32(static_cast<int32>(sent));
}

// send_batch_topic(routing_key, msgs, [headers], [delay]) -> (queue_name,
// msg_id) per message and matching queue, queues in name order.
Datum SendBatchTopic(FunctionCallInfo fcinfo, const SendArgs &args)
{
	BeginRowsResult(fcinfo);
	CheckRoutingKeyArgument(fcinfo);
	ArrayType *msgs = ArrayArgument(fcinfo, 1);
	ArrayType *headers = ArrayArgument(fcinfo, args.headers);
	CheckBatchArguments(msgs, headers);
	Datum values[4] = {Datum(0), PointerGetDatum(msgs), PointerGetDatum(headers),
	                   TimestampTzGetDatum(SendVisibleAt(fcinfo, args))};
	const char nulls[4] = {' ', ' ', NullFlag(!headers), ' '};
	SpiConnect();
	values[0] = MatchingQueues(fcinfo);
	// Streamed, as send_batch's: bounded memory for any batch.
	ExecutePlanIntoResult(fcinfo, PlanFor(core::Statement::SendBatchTopic), values, nulls);
	SpiFinish();
	return Datum(0);
}

}  // namespace

// validate_routing_key(routing_key text) -> true, or ERROR naming the rule broken.
PGMQ_FUNCTION(pgmq_validate_routing_key)
{
	CheckRoutingKeyArgument(fcinfo);
	PG_RETURN_BOOL(true);
}

// validate_topic_pattern(pattern text) -> true, or ERROR naming the rule broken.
PGMQ_FUNCTION(pgmq_validate_topic_pattern)
{
	const std::string_view pattern = TextArgument(fcinfo, 0);
	RunCore([pattern] { core::CheckTopicPattern(pattern); });
	PG_RETURN_BOOL(true);
}

// _topic_pattern_regex(pattern text) -> text: the compiled_regex of a binding.
PGMQ_FUNCTION(pgmq_topic_pattern_regex)
{
	const std::string_view pattern = TextArgument(fcinfo, 0);
	text *regex = nullptr;
	RunCore([&] {
		const std::string compiled = core::TopicPatternRegex(pattern);
		regex = CallPostgres([&] { return cstring_to_text_with_len(compiled.data(), static_cast<int>(compiled.size())); });
	});
	PG_RETURN_TEXT_P(regex);
}

// bind_topic(pattern text, queue_name text): routes keys matching pattern to
// the queue (named exactly as in pgmq.meta). Binding twice is a no-op.
PGMQ_FUNCTION(pgmq_bind_topic)
{
	const std::string_view pattern = TextArgument(fcinfo, 0);
	RunCore([pattern] { core::CheckTopicPattern(pattern); });
	RequireNonEmpty(fcinfo, 1, "queue_name");
	bool queue_known = false;
	SpiConnect();
	Oid types[2] = {TEXTOID, TEXTOID};
	Datum values[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
	RunCore([&] { queue_known = ExecuteOnce(core::QueueInMetaSql(), 1, types + 1, values + 1) > 0; });
	if (!queue_known)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("Queue \"%s\" does not exist. Create the queue first using pgmq.create()",
		                       text_to_cstring(PG_GETARG_TEXT_PP(1)))));
	RequireBindingRights(fcinfo, 1);
	RunCore([&] { ExecuteOnce(core::InsertTopicBindingSql(), 2, types, values); });
	SpiFinish();
	PG_RETURN_VOID();
}

// unbind_topic(pattern text, queue_name text) -> whether a binding was removed.
PGMQ_FUNCTION(pgmq_unbind_topic)
{
	RequireNonEmpty(fcinfo, 0, "pattern");
	RequireNonEmpty(fcinfo, 1, "queue_name");
	RequireBindingRights(fcinfo, 1);
	uint64 removed = 0;
	SpiConnect();
	RunCore([&] {
		Oid types[2] = {TEXTOID, TEXTOID};
		Datum values[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
		removed = ExecuteOnce(core::DeleteTopicBindingSql(), 2, types, values);
	});
	SpiFinish();
	PG_RETURN_BOOL(removed > 0);
}

// _validate_batch_params(msgs jsonb[], headers jsonb[]): the send_batch checks.
PGMQ_FUNCTION(pgmq_validate_batch_params)
{
	CheckBatchArguments(ArrayArgument(fcinfo, 0), ArrayArgument(fcinfo, 1));
	PG_RETURN_VOID();
}

// send_topic(routing_key text, msg jsonb)
PGMQ_FUNCTION(pgmq_send_topic) { return SendTopic(fcinfo, {-1, -1, -1}); }
// send_topic(routing_key text, msg jsonb, delay integer)
PGMQ_FUNCTION(pgmq_send_topic_delay) { return SendTopic(fcinfo, {-1, 2, -1}); }
// send_topic(routing_key text, msg jsonb, headers jsonb, delay integer)
PGMQ_FUNCTION(pgmq_send_topic_headers_delay) { return SendTopic(fcinfo, {2, 3, -1}); }

// send_batch_topic(routing_key text, msgs jsonb[])
PGMQ_FUNCTION(pgmq_send_batch_topic) { return SendBatchTopic(fcinfo, {-1, -1, -1}); }
// send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[])
PGMQ_FUNCTION(pgmq_send_batch_topic_headers) { return SendBatchTopic(fcinfo, {2, -1, -1}); }
// send_batch_topic(routing_key text, msgs jsonb[], delay integer)
PGMQ_FUNCTION(pgmq_send_batch_topic_delay) { return SendBatchTopic(fcinfo, {-1, 2, -1}); }
// send_batch_topic(routing_key text, msgs jsonb[], delay timestamptz)
PGMQ_FUNCTION(pgmq_send_batch_topic_at) { return SendBatchTopic(fcinfo, {-1, -1, 2}); }
// send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer)
PGMQ_FUNCTION(pgmq_send_batch_topic_headers_delay) { return SendBatchTopic(fcinfo, {2, 3, -1}); }
// send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamptz)
PGMQ_FUNCTION(pgmq_send_batch_topic_headers_at) { return SendBatchTopic(fcinfo, {2, -1, 3}); }
