// src/pg/stream.cpp
// Resolving stream and group arguments (see stream.hpp).
#include "pgmq/pg/stream.hpp"

#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

bool IsStreamTable(Oid relid)
{
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	HeapTuple tuple = SearchSysCacheAttName(relid, "xid");
	if (!HeapTupleIsValid(tuple))
		return false;
	const bool is_xid8 = reinterpret_cast<Form_pg_attribute>(GETSTRUCT(tuple))->atttypid == XID8OID;
	ReleaseSysCache(tuple);
	return is_xid8;
}

void RefuseStream(const QueueRef &queue)
{
	if (OidIsValid(queue.queue_relid) && IsStreamTable(queue.queue_relid))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("\"%.*s\" is a stream, not a queue", queue.name_len, queue.name),
		                errdetail("Leasing, deleting or archiving a stream's message would do it for every consumer group."),
		                errhint("Read a stream as a consumer group: pgmq.read_stream(stream_name, group_name, vt, qty), "
		                        "then pgmq.ack(stream_name, group_name, msg_id).")));
}

void ResolveStream(FunctionCallInfo fcinfo, int argno, QueueRef *queue)
{
	ResolveQueue(fcinfo, argno, queue);
	if (!IsStreamTable(queue->queue_relid))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("queue \"%.*s\" is not a stream", queue->name_len, queue->name),
		                errhint("Make a stream with pgmq.create_stream(stream_name).")));
	VerifyTableShape(queue->queue_relid, queue->queue_table, TableRole::Queue, AccessShareLock);
}

void RequireStreamRead(const QueueRef &stream)
{
	const AclResult result = pg_class_aclcheck(stream.queue_relid, GetUserId(), ACL_SELECT);
	if (result != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to read stream \"%.*s\"", stream.name_len, stream.name),
		                errdetail("Reading, acknowledging and moving a consumer group need SELECT on table pgmq.%s.",
		                          stream.queue_table),
		                errhint("The stream's owner grants it with pgmq.grant_queue_access(stream_name, role).")));
}

void RequireStreamOwner(const QueueRef &stream, const char *action)
{
	if (!OwnsQueueTable(stream.queue_relid))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to %s stream \"%.*s\"", action, stream.name_len, stream.name),
		                errdetail("Only the stream's owner adds, changes and removes its consumer groups.")));
}

void RequireDeadLetterSend(const QueueRef &stream, Datum group, Datum dead_letter)
{
	QueueRef target;
	text *name = DatumGetTextPP(dead_letter);
	if (!FindQueueQuietly(name, &target) ||
	    pg_class_aclcheck(target.queue_relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to read stream \"%.*s\" as consumer group \"%s\"", stream.name_len,
		                       stream.name, TextDatumGetCString(group)),
		                errdetail("The group's dead-letter queue \"%s\" takes the messages its readers set aside, so "
		                          "they need INSERT on it.",
		                          text_to_cstring(name)),
		                errhint("The queue's owner grants it with pgmq.grant_queue_access(queue_name, role).")));
}

bool ActsAsGroupReader(const QueueRef &stream, Datum reader_role)
{
	if (OwnsQueueTable(stream.queue_relid))
		return true;
	const Oid role = get_role_oid(NameStr(*DatumGetName(reader_role)), true);
	return OidIsValid(role) && has_privs_of_role(GetUserId(), role);
}

void RequireGroupReader(const QueueRef &stream, Datum group, Datum reader_role)
{
	if (!ActsAsGroupReader(stream, reader_role))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to read stream \"%.*s\" as consumer group \"%s\"", stream.name_len,
		                       stream.name, TextDatumGetCString(group)),
		                errdetail("The group is read by role \"%s\" and the roles that have its privileges.",
		                          NameStr(*DatumGetName(reader_role))),
		                errhint("The stream's owner names a group's reader with pgmq.subscribe(stream_name, "
		                        "group_name, reader => role).")));
}

Datum GroupArgument(FunctionCallInfo fcinfo, int argno)
{
	RequireArgument(fcinfo, argno, "group_name");
	return PG_GETARG_DATUM(argno);
}

void NoSuchGroup(const QueueRef &stream, Datum group)
{
	ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
	                errmsg("consumer group \"%s\" of stream \"%.*s\" does not exist", TextDatumGetCString(group),
	                       stream.name_len, stream.name),
	                errhint("Subscribe it with pgmq.subscribe(stream_name, group_name); pgmq.stream_groups(stream_name) "
	                        "lists the groups.")));
}

}  // namespace pgmq::pg
