// src/pg/queue.cpp
// Resolving queue-name arguments to tables, and the per-queue advisory lock.
#include "pgmq/core/policy.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

void RequireArgument(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s cannot be NULL", what)));
}

namespace {

void ReadNameText(text *name, QueueRef *queue, bool new_queue)
{
	queue->name = VARDATA_ANY(name);
	queue->name_len = VARSIZE_ANY_EXHDR(name);
	queue->queue_relid = InvalidOid;
	RunCore([queue, new_queue] {
		const std::string_view view(queue->name, queue->name_len);
		core::CheckQueueNameCharacters(view);
		if (new_queue)
			core::CheckQueueNameLength(view);
		core::WriteQueueTableNames(view, queue->queue_table, queue->archive_table, NAMEDATALEN);
	});
}

void ReadName(FunctionCallInfo fcinfo, int argno, QueueRef *queue, bool new_queue)
{
	RequireArgument(fcinfo, argno, "queue_name");
	ReadNameText(PG_GETARG_TEXT_PP(argno), queue, new_queue);
}

void RequireQueue(QueueRef *queue)
{
	if (!QueueExists(queue))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("queue \"%.*s\" does not exist", queue->name_len, queue->name),
		                errhint("SELECT queue_name FROM pgmq.list_queues() lists the queues; "
		                        "SELECT pgmq.create('%.*s') creates this one.", queue->name_len, queue->name)));
}

}  // namespace

void ReadQueueName(FunctionCallInfo fcinfo, int argno, QueueRef *queue) { ReadName(fcinfo, argno, queue, false); }

void ReadNewQueueName(FunctionCallInfo fcinfo, int argno, QueueRef *queue) { ReadName(fcinfo, argno, queue, true); }

bool QueueExists(QueueRef *queue)
{
	const Oid namespace_oid = get_namespace_oid("pgmq", true);
	queue->queue_relid = OidIsValid(namespace_oid) ? get_relname_relid(queue->queue_table, namespace_oid) : InvalidOid;
	return OidIsValid(queue->queue_relid);
}

bool FindQueueQuietly(const char *name, int name_len, QueueRef *queue)
{
	queue->name = name;
	queue->name_len = name_len;
	Failure failure;
	if (!TryCore(failure, [queue] {
		    const std::string_view view(queue->name, queue->name_len);
		    core::CheckQueueNameCharacters(view);
		    core::WriteQueueTableNames(view, queue->queue_table, queue->archive_table, NAMEDATALEN);
	    }))
		return false;
	return QueueExists(queue);
}

void ResolveQueue(FunctionCallInfo fcinfo, int argno, QueueRef *queue)
{
	ReadQueueName(fcinfo, argno, queue);
	RequireQueue(queue);
}

void ResolveQueueName(text *name, QueueRef *queue)
{
	ReadNameText(name, queue, false);
	RequireQueue(queue);
}

void LockQueueName(const QueueRef &queue)
{
	static const char prefix[] = "pgmq.queue_";
	const int prefix_len = sizeof prefix - 1;
	text *key = static_cast<text *>(palloc(VARHDRSZ + prefix_len + queue.name_len));
	SET_VARSIZE(key, VARHDRSZ + prefix_len + queue.name_len);
	memcpy(VARDATA(key), prefix, prefix_len);
	// One lock for every spelling of the name: they share the tables.
	for (int i = 0; i < queue.name_len; i++)
		VARDATA(key)[prefix_len + i] = pg_ascii_tolower(static_cast<unsigned char>(queue.name[i]));
	const int32 hash = DatumGetInt32(DirectFunctionCall1Coll(hashtext, DEFAULT_COLLATION_OID, PointerGetDatum(key)));
	// SQL's implicit int4 -> int8 cast picks the bigint lock: sign-extend the same way.
	DirectFunctionCall1(pg_advisory_xact_lock_int8, Int64GetDatum(static_cast<int64>(hash)));
	pfree(key);
}

Oid RelationOwner(Oid relid)
{
	HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		return InvalidOid;
	const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

bool OwnsQueueTable(Oid relid)
{
	HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		return false;
	const char relkind = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relkind;
	const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) && has_privs_of_role(GetUserId(), owner);
}

void RequireDeadLetterInsert(const QueueRef &dead_letter)
{
	if (pg_class_aclcheck(dead_letter.queue_relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to use queue \"%.*s\" as a dead-letter queue", dead_letter.name_len,
		                       dead_letter.name),
		                errdetail("Role \"%s\" may not insert into pgmq.%s.", GetUserNameFromId(GetUserId(), false),
		                          dead_letter.queue_table)));
}

Datum MetaQueueName(const QueueRef &queue)
{
	Oid types[1] = {TEXTOID};
	Datum values[1] = {PointerGetDatum(cstring_to_text_with_len(queue.name, queue.name_len))};
	const int rc = SPI_execute_with_args(core::MetaQueueNameSql().c_str(), 1, types, values, nullptr, false, 1);
	if (rc != SPI_OK_SELECT || SPI_processed == 0)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("queue \"%.*s\" does not exist", queue.name_len, queue.name),
		                errdetail("pgmq.meta has no row for it.")));
	bool isnull = true;
	const Datum name = ResultValue(0, 1, TEXTOID, &isnull);
	return PointerGetDatum(DatumGetTextPCopy(name));
}

}  // namespace pgmq::pg
