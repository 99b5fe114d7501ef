// src/pg/entry_streams.cpp
// Making streams and managing their consumer groups (docs/streams.md):
// create_stream, subscribe, unsubscribe, seek, and the row-security helper
// _may_read_as. Reading and acknowledging are in entry_stream_read.cpp.
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/group_row.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/stream.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// ERROR 22023 unless interval argument argno is set and not negative.
Datum RetentionArgument(FunctionCallInfo fcinfo, int argno, const char *what)
{
	RequireArgument(fcinfo, argno, what);
	Interval zero{};
	const Datum value = PG_GETARG_DATUM(argno);
	if (DatumGetBool(DirectFunctionCall2(interval_lt, value, IntervalPGetDatum(&zero))))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must not be negative", what)));
	return value;
}

// seek(stream, group, floor): an empty window before every transaction, with
// the floor (argument 2, msg_id or time) for the window read next.
Datum Seek(FunctionCallInfo fcinfo, bool by_id)
{
	QueueRef stream;
	RefuseDuringRecovery(fcinfo);
	ResolveStream(fcinfo, 0, &stream);
	RequireStreamRead(stream);
	const Datum group = GroupArgument(fcinfo, 1);
	RequireArgument(fcinfo, 2, by_id ? "msg_id" : "since");
	Oid types[4] = {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID};
	Datum values[4] = {PG_GETARG_DATUM(0), group, by_id ? PG_GETARG_DATUM(2) : Datum(0),
	                   by_id ? Datum(0) : PG_GETARG_DATUM(2)};
	const char nulls[4] = {' ', ' ', by_id ? ' ' : 'n', by_id ? 'n' : ' '};
	SpiConnect();
	uint64 rows = 0;
	InStreamScope([&] {
		RunCore([&] { ExecuteOnce(core::GroupGuardsSql(), 2, types, values); });
		if (SPI_processed == 0)
			return;
		bool isnull = true;
		const Datum reader = ResultValue(0, 2, NAMEOID, &isnull);
		if (!isnull)
			RequireGroupReader(stream, group, reader);
		const Datum dead_letter = ResultValue(0, 1, TEXTOID, &isnull);
		if (!isnull)
			RequireDeadLetterSend(stream, group, dead_letter);
		RunCore([&] { rows = ExecuteOnce(core::SeekSql(), 4, types, values, nulls); });
	});
	if (rows == 0)
		NoSuchGroup(stream, group);
	SpiFinish();
	PG_RETURN_VOID();
}

}  // namespace

// create_stream(stream_name text, retention interval, max_retention
// interval): the stream's tables, its first partition, its meta and
// streams rows. Idempotent for an existing stream (NOTICE); an existing
// queue of that name is refused.
PGMQ_FUNCTION(pgmq_create_stream)
{
	QueueRef stream;
	RefuseDuringRecovery(fcinfo);
	ReadNewQueueName(fcinfo, 0, &stream);
	const Datum retention = RetentionArgument(fcinfo, 1, "retention");
	const Datum max_retention = RetentionArgument(fcinfo, 2, "max_retention");
	if (DatumGetBool(DirectFunctionCall2(interval_lt, max_retention, retention)))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("max_retention must not be shorter than retention")));
	RequireCreateOnSchema();
	LockQueueName(stream);
	if (QueueExists(&stream)) {
		if (!IsStreamTable(stream.queue_relid))
			ereport(ERROR, (errcode(ERRCODE_DUPLICATE_TABLE),
			                errmsg("queue \"%.*s\" already exists and is not a stream", stream.name_len, stream.name),
			                errhint("Choose another name, or drop the queue with pgmq.drop_queue first.")));
		ereport(NOTICE, (errmsg("stream \"%.*s\" already exists, skipping", stream.name_len, stream.name)));
		PG_RETURN_VOID();
	}
	SpiConnect();
	const Registration registration = FindRegistration(&stream);
	core::ExistingRelations existing{};
	CheckRelationsForCreate(stream, true, registration.registered, &existing);
	InStreamScope([&] {
		RunCore([&] {
			for (const std::string &statement : core::CreateStreamStatements(stream.queue_table, stream.archive_table))
				ExecuteOnce(statement);
			RegisterQueue(registration, PG_GETARG_DATUM(0), true, false);
		});
		QueueExists(&stream);
		Oid types[4] = {TEXTOID, OIDOID, INTERVALOID, INTERVALOID};
		Datum values[4] = {PG_GETARG_DATUM(0), ObjectIdGetDatum(stream.queue_relid), retention, max_retention};
		RunCore([&] { ExecuteOnce(core::InsertStreamSql(), 4, types, values); });
		MakeStreamPartitionsAhead(stream, PG_GETARG_DATUM(0));
	});
	SpiFinish();
	PG_RETURN_VOID();
}

// subscribe(stream_name, group_name, since, ordered, dead_letter_queue,
// max_deliveries, reader regrole): a new group, or new options for an
// existing one.
PGMQ_FUNCTION(pgmq_subscribe)
{
	QueueRef stream;
	RefuseDuringRecovery(fcinfo);
	ResolveStream(fcinfo, 0, &stream);
	const Datum group = GroupArgument(fcinfo, 1);
	const text *group_text = DatumGetTextPP(group);
	if (VARSIZE_ANY_EXHDR(group_text) == 0 || VARSIZE_ANY_EXHDR(group_text) > NAMEDATALEN - 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_NAME), errmsg("a consumer group's name has 1 to %d bytes", NAMEDATALEN - 1)));
	const bool ordered = !PG_ARGISNULL(3) && PG_GETARG_BOOL(3);
	const bool has_dead_letter_queue = !PG_ARGISNULL(4);
	const bool has_max = !PG_ARGISNULL(5);
	if (has_max && PG_GETARG_INT32(5) < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("max_deliveries must be at least 1")));
	if (has_max && !has_dead_letter_queue)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("max_deliveries needs a dead_letter_queue to set the messages aside in")));
	QueueRef dead_letter;
	if (has_dead_letter_queue) {
		ResolveQueue(fcinfo, 4, &dead_letter);
		RefuseStream(dead_letter);
	}
	RequireStreamOwner(stream, "subscribe to");
	if (has_dead_letter_queue)
		RequireDeadLetterInsert(dead_letter);
	// Kept by name: a role dropped (or renamed) later admits no one but the owner.
	const bool has_reader = !PG_ARGISNULL(6);
	const Datum reader = has_reader ? CStringGetTextDatum(GetUserNameFromId(PG_GETARG_OID(6), false)) : Datum(0);
	Oid types[7] = {TEXTOID, TEXTOID, TIMESTAMPTZOID, BOOLOID, TEXTOID, INT4OID, TEXTOID};
	Datum values[7] = {PG_GETARG_DATUM(0), group, PG_ARGISNULL(2) ? Datum(0) : PG_GETARG_DATUM(2), BoolGetDatum(ordered),
	                   has_dead_letter_queue ? PG_GETARG_DATUM(4) : Datum(0), has_max ? PG_GETARG_DATUM(5) : Datum(0),
	                   reader};
	const char nulls[7] = {' ', ' ', NullFlag(PG_ARGISNULL(2)), ' ', NullFlag(!has_dead_letter_queue), NullFlag(!has_max),
	                       NullFlag(!has_reader)};
	SpiConnect();
	bool created = true;
	InStreamScope([&] {
		// Readers may update only a group's cursor and leases (column
		// privileges): an existing group's options are changed as the table's
		// owner, for the stream's owner checked above.
		const Oid groups_owner = RelationOwner(ConsumerGroupsRelid());
		if (!OidIsValid(groups_owner))
			ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("pgmq: table pgmq.consumer_groups is missing")));
		Oid option_types[6] = {TEXTOID, TEXTOID, BOOLOID, TEXTOID, INT4OID, TEXTOID};
		Datum options[6] = {values[0], values[1], values[3], values[4], values[5], values[6]};
		const char option_nulls[6] = {' ', ' ', ' ', nulls[4], nulls[5], nulls[6]};
		for (int attempt = 0; attempt < 2; attempt++) {
			RunCore([&] { created = ExecuteOnce(core::SubscribeNewSql(), 7, types, values, nulls) > 0; });
			if (created)
				return;
			uint64 changed = 0;
			AsOwner(groups_owner, [&] {
				RunCore([&] { changed = ExecuteOnce(core::SubscribeOptionsSql(), 6, option_types, options, option_nulls); });
			});
			if (changed > 0)
				return;  // else unsubscribed meanwhile: made again
		}
	});
	if (!created && !PG_ARGISNULL(2))
		ereport(NOTICE, (errmsg("consumer group \"%s\" exists: its options are changed, its position is kept",
		                        TextDatumGetCString(group)),
		                 errhint("Move it with pgmq.seek(stream_name, group_name, since).")));
	SpiFinish();
	PG_RETURN_VOID();
}

// unsubscribe(stream_name, group_name) -> boolean
PGMQ_FUNCTION(pgmq_unsubscribe)
{
	QueueRef stream;
	RefuseDuringRecovery(fcinfo);
	ResolveStream(fcinfo, 0, &stream);
	RequireStreamOwner(stream, "unsubscribe from");
	Oid types[2] = {TEXTOID, TEXTOID};
	Datum values[2] = {PG_GETARG_DATUM(0), GroupArgument(fcinfo, 1)};
	SpiConnect();
	uint64 rows = 0;
	InStreamScope([&] { RunCore([&] { rows = ExecuteOnce(core::UnsubscribeSql(), 2, types, values); }); });
	SpiFinish();
	PG_RETURN_BOOL(rows > 0);
}

// seek(stream_name, group_name, since timestamptz)
PGMQ_FUNCTION(pgmq_seek_time) { return Seek(fcinfo, false); }
// seek(stream_name, group_name, msg_id bigint)
PGMQ_FUNCTION(pgmq_seek_id) { return Seek(fcinfo, true); }

// _may_read_as(stream_name text, reader_role name) -> boolean, STABLE:
// SELECT on the stream's table (found by the OID of schema pgmq, never
// through the search_path), and unless reader_role is NULL, its privileges
// or the stream's ownership.
PGMQ_FUNCTION(pgmq_may_read_as)
{
	QueueRef stream;
	if (PG_ARGISNULL(0) || !FindQueueQuietly(PG_GETARG_TEXT_PP(0), &stream) ||
	    pg_class_aclcheck(stream.queue_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(PG_ARGISNULL(1) || ActsAsGroupReader(stream, PG_GETARG_DATUM(1)));
}
