// src/pg/table_shape.cpp
// Verifying queue and archive tables against the shape pgmq creates, and
// against the rule for what they may carry (see table_shape.hpp). Columns
// are looked up by name: upgraded upstream tables have another physical
// column order.
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

namespace {

struct ExpectedColumn {
	const char *name;
	Oid type;
};

// The columns of message_record, which every table has.
const ExpectedColumn kMessageColumns[] = {
	{"msg_id", INT8OID},          {"read_ct", INT4OID}, {"enqueued_at", TIMESTAMPTZOID},
	{"last_read_at", TIMESTAMPTZOID}, {"vt", TIMESTAMPTZOID}, {"message", JSONBOID},
	{"headers", JSONBOID},
};
const ExpectedColumn kArchivedAt = {"archived_at", TIMESTAMPTZOID};

const char kHint[] = "Restore the table as pgmq.create makes it, or drop the queue and create it again.";

const char *RoleName(TableRole role) { return role == TableRole::Queue ? "queue table" : "archive table"; }

// Checks one column; returns its identity kind ('\0' for none).
char VerifyColumn(Oid relid, const char *table, TableRole role, const ExpectedColumn &column)
{
	// SearchSysCacheAttName skips dropped columns.
	HeapTuple tuple = SearchSysCacheAttName(relid, column.name);
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
		                errmsg("%s \"pgmq.%s\" has no column \"%s\"", RoleName(role), table, column.name),
		                errhint("%s", kHint)));
	const auto *attribute = reinterpret_cast<Form_pg_attribute>(GETSTRUCT(tuple));
	const Oid type = attribute->atttypid;
	const char identity = attribute->attidentity;
	ReleaseSysCache(tuple);
	if (type != column.type)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("column \"%s\" of %s \"pgmq.%s\" has type %s, but pgmq expects %s", column.name,
		                       RoleName(role), table, format_type_be(type), format_type_be(column.type)),
		                errhint("%s", kHint)));
	return identity;
}

}  // namespace

void VerifyTableShape(Oid relid, const char *table, TableRole role, LOCKMODE lockmode)
{
	VerifyTableColumns(relid, table, role);
	if (lockmode != NoLock) {
		LockRelationOid(relid, lockmode);
		LockTree(relid, lockmode);
	}
	RequireOwnCodeOnly(relid, RoleName(role), table);
}

void VerifyTableColumns(Oid relid, const char *table, TableRole role)
{
	const char relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("%s \"pgmq.%s\" does not exist", RoleName(role), table)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("%s \"pgmq.%s\" is %s, not a table", RoleName(role), table, RelkindName(relkind)),
		                errdetail("pgmq keeps messages only in ordinary or partitioned tables.")));
	for (const ExpectedColumn &column : kMessageColumns) {
		const char identity = VerifyColumn(relid, table, role, column);
		// Sends take msg_id from the identity; metrics reads its sequence.
		if (role == TableRole::Queue && identity == '\0' && strcmp(column.name, "msg_id") == 0)
			ereport(ERROR, (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			                errmsg("column \"msg_id\" of queue table \"pgmq.%s\" is not an identity column", table),
			                errhint("%s", kHint)));
	}
	if (role == TableRole::Archive)
		VerifyColumn(relid, table, role, kArchivedAt);
}

Oid MsgIdSequence(Oid relid, const char *table)
{
	const AttrNumber msg_id = get_attnum(relid, "msg_id");
	const Oid sequence = msg_id == InvalidAttrNumber ? InvalidOid : IdentitySequence(relid, msg_id, true);
	if (!OidIsValid(sequence)) {
		// The precise error when the table is not pgmq's shape at all.
		VerifyTableColumns(relid, table, TableRole::Queue);
		ereport(ERROR, (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		                errmsg("column \"msg_id\" of queue table \"pgmq.%s\" is not an identity column", table),
		                errhint("%s", kHint)));
	}
	return sequence;
}

const char *RelkindName(char relkind)
{
	switch (relkind) {
	case RELKIND_RELATION:
		return "a plain table";
	case RELKIND_PARTITIONED_TABLE:
		return "a partitioned table";
	case RELKIND_VIEW:
		return "a view";
	case RELKIND_MATVIEW:
		return "a materialized view";
	case RELKIND_FOREIGN_TABLE:
		return "a foreign table";
	case RELKIND_SEQUENCE:
		return "a sequence";
	case RELKIND_INDEX:
	case RELKIND_PARTITIONED_INDEX:
		return "an index";
	case RELKIND_COMPOSITE_TYPE:
		return "a composite type";
	case RELKIND_TOASTVALUE:
		return "a TOAST table";
	}
	return "another kind of relation";
}

void RequireSequenceRead(Oid sequence)
{
	const AclResult result = pg_class_aclcheck(sequence, GetUserId(), ACL_SELECT | ACL_USAGE);
	if (result != ACLCHECK_OK)
		aclcheck_error(result, OBJECT_SEQUENCE, get_rel_name(sequence));
}

}  // namespace pgmq::pg
