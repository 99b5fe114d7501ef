// src/pg/queue_relations.cpp
// The relations create* may find under a queue's names (see
// queue_relations.hpp): only pgmq's own, made for this queue, and usable by
// the caller.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/policy.hpp"
#include "pgmq/core/queue_name.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "parser/scansup.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

namespace {

// A relation create* makes, and where to record that it exists.
struct ExpectedRelation {
	char *name;            // as Postgres stores it: truncated to an identifier
	const char *relkinds;  // the kinds pgmq makes under this name
	const char *what;      // "table", "index", "sequence", for the error
	bool *exists;          // nullptr: checked, not recorded
};

constexpr int kMaxExpected = 8;

// name truncated as the parser truncates an identifier. From C++ code; may throw.
char *Identifier(const std::string &name)
{
	return CallPostgres([&] {
		char *copy = pstrdup(name.c_str());
		truncate_identifier(copy, static_cast<int>(strlen(copy)), false);
		return copy;
	});
}

// The default partition of pgmq.<table> (core::DefaultPartitionName),
// palloc'd and truncated as Postgres would truncate the name.
char *DefaultPartitionOf(const char *table)
{
	char *name = nullptr;
	RunCore([&] {
		const std::string made = core::DefaultPartitionName(table);
		name = CallPostgres([&] { return pstrdup(made.c_str()); });
	});
	truncate_identifier(name, static_cast<int>(strlen(name)), false);
	return name;
}

// Fills expected with every name create* makes for the queue; returns how many.
int ExpectedRelations(const QueueRef &queue, bool partitioned, bool registered, core::ExistingRelations *existing,
                      ExpectedRelation *expected)
{
	int count = 0;
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		expected[count++] = {Identifier(queue.queue_table), "rp", "table", &existing->queue_table};
		expected[count++] = {Identifier(queue.archive_table), "rp", "table", &existing->archive_table};
		if (partitioned)
			expected[count++] = {Identifier(core::QueueIndexName(name, true)), "iI", "index", &existing->queue_index};
		expected[count++] = {Identifier(core::ArchiveIndexName(name)), "iI", "index", &existing->archive_index};
	});
	// Names Postgres chooses itself (ChooseRelationName's first choice).
	expected[count++] = {makeObjectName(queue.queue_table, "msg_id", "seq"), "S", "sequence", nullptr};
	if (!partitioned) {
		expected[count++] = {makeObjectName(queue.queue_table, nullptr, "pkey"), "iI", "index", nullptr};
		expected[count++] = {makeObjectName(queue.archive_table, nullptr, "pkey"), "iI", "index", nullptr};
	} else if (!registered) {
		// A registered queue's default partitions are partman's to check.
		expected[count++] = {DefaultPartitionOf(queue.queue_table), "", "partition", nullptr};
		expected[count++] = {DefaultPartitionOf(queue.archive_table), "", "partition", nullptr};
	}
	Assert(count <= kMaxExpected);
	return count;
}

}  // namespace

bool MayAdoptRelation(Oid owner)
{
	const Oid caller = GetUserId();
	if (owner == caller)
		return true;
	if (!has_privs_of_role(caller, owner))
		return false;
	// A superuser has the privileges of every role: it may adopt only what a
	// superuser, or a role it really belongs to, owns.
	return !superuser_arg(caller) || superuser_arg(owner) || is_member_of_role_nosuper(caller, owner);
}

void RequireRelationOwner(Oid relid)
{
#if PG_VERSION_NUM >= 160000
	const bool owner = object_ownercheck(RelationRelationId, relid, GetUserId());
#else
	const bool owner = pg_class_ownercheck(relid, GetUserId());
#endif
	if (!owner)
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)), get_rel_name(relid));
}

Registration FindRegistration(QueueRef *queue)
{
	Registration registration{false, false, Datum(0)};
	Datum name = PointerGetDatum(cstring_to_text_with_len(queue->name, queue->name_len));
	bool found = false;
	RunCore([&] {
		Oid types[1] = {TEXTOID};
		Datum values[1] = {name};
		found = ExecuteOnce(core::QueueRegisteredSql(), 1, types, values) > 0;
	});
	if (found) {
		bool isnull = true;
		registration.name = PointerGetDatum(DatumGetTextPCopy(ResultValue(0, 1, TEXTOID, &isnull)));
		registration.stale = !QueueExists(queue);
		registration.registered = !registration.stale;
	}
	return registration;
}

void ForgetQueueRows(Datum name)
{
	Oid types[1] = {TEXTOID};
	const uint64 rows = ExecuteOnce(core::DeleteMetaSql(), 1, types, &name);
	if (rows == 0 || !CallPostgres(PolicyTablesExist))
		return;
	// Deduplication ids have no foreign key (one more lookup per send).
	std::vector<Datum> names;
	SPITupleTable *deleted = SPI_tuptable;
	for (uint64 i = 0; i < rows; i++) {
		bool isnull = true;
		names.push_back(CallPostgres([&] { return SPI_getbinval(deleted->vals[i], deleted->tupdesc, 1, &isnull); }));
	}
	for (Datum deleted_name : names)
		ExecuteOnce(core::DeleteDeduplicationSql(), 1, types, &deleted_name);
}

void RegisterQueue(const Registration &registration, Datum name, bool partitioned, bool unlogged)
{
	if (registration.stale)
		ForgetQueueRows(name);
	if (registration.registered)
		return;
	Oid types[3] = {TEXTOID, BOOLOID, BOOLOID};
	Datum values[3] = {name, BoolGetDatum(partitioned), BoolGetDatum(unlogged)};
	ExecuteOnce(core::InsertMetaSql(), 3, types, values);
}

void RequireCreateOnSchema()
{
	const Oid namespace_oid = get_namespace_oid("pgmq", false);
#if PG_VERSION_NUM >= 160000
	const AclResult result = object_aclcheck(NamespaceRelationId, namespace_oid, GetUserId(), ACL_CREATE);
#else
	const AclResult result = pg_namespace_aclcheck(namespace_oid, GetUserId(), ACL_CREATE);
#endif
	if (result != ACLCHECK_OK)
		aclcheck_error(result, OBJECT_SCHEMA, get_namespace_name(namespace_oid));
}

void CheckRelationsForCreate(const QueueRef &queue, bool partitioned, bool registered,
                             core::ExistingRelations *existing)
{
	ExpectedRelation expected[kMaxExpected];
	*existing = core::ExistingRelations{};
	const int count = ExpectedRelations(queue, partitioned, registered, existing, expected);
	const Oid namespace_oid = get_namespace_oid("pgmq", false);
	for (int i = 0; i < count; i++) {
		const Oid relid = get_relname_relid(expected[i].name, namespace_oid);
		if (!OidIsValid(relid))
			continue;
		HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		if (!HeapTupleIsValid(tuple))
			continue;  // dropped meanwhile
		const char relkind = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relkind;
		const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
		ReleaseSysCache(tuple);
		const bool right_kind = std::strchr(expected[i].relkinds, relkind) != nullptr;
		if (!registered && !(right_kind && MayAdoptRelation(owner)))
			ereport(ERROR, (errcode(ERRCODE_DUPLICATE_TABLE),
			                errmsg("relation \"pgmq.%s\" already exists and was not created by pgmq.create for queue \"%.*s\"",
			                       expected[i].name, queue.name_len, queue.name),
			                errdetail("pgmq.meta has no row for this queue, and the relation is %s owned by role \"%s\".",
			                          RelkindName(relkind), GetUserNameFromId(owner, false)),
			                errhint("Drop the relation, or choose another queue name.")));
		if (!right_kind)
			ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                errmsg("queue \"%.*s\" already exists, but \"pgmq.%s\" is %s, not the %s pgmq made",
			                       queue.name_len, queue.name, expected[i].name, RelkindName(relkind), expected[i].what)));
		if (!MayAdoptRelation(owner))
			ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                errmsg("queue \"%.*s\" already exists and \"pgmq.%s\" belongs to role \"%s\"", queue.name_len,
			                       queue.name, expected[i].name, GetUserNameFromId(owner, false)),
			                errhint("Only the queue's owner, or a member of the owner's role, may create it again.")));
		if (expected[i].exists != nullptr)
			*expected[i].exists = true;
	}
}

}  // namespace pgmq::pg
