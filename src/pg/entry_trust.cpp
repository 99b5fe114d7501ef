// src/pg/entry_trust.cpp
// The rule for what a queue's table may carry (table_trust.hpp), as SQL
// functions: for programs that read queue tables themselves, such as
// pgmq-console, which must refuse the same tables pgmq refuses, and for the
// tests. Both answer for the current user, as pgmq's own checks do, and
// first lock each table the user may read (ACCESS SHARE, partitions too)
// until the end of the transaction: a statement later in it reads what was
// checked (DDL that attaches code waits, or its invalidation is seen).
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
}

using namespace pgmq::pg;

namespace {

text *Reason(const ForeignCode &found) { return cstring_to_text(psprintf("%s, which %s", found.carrier, found.problem)); }

// Only tables the user may read: no role takes locks on others' tables here.
void LockReadable(Oid relid)
{
	bool missing = false;
	if (pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT, &missing) != ACLCHECK_OK || missing)
		return;
	LockRelationOid(relid, AccessShareLock);
	LockTree(relid, AccessShareLock);
}

}  // namespace

// _table_runs_foreign_code(relation regclass) -> text: NULL when the current
// user may run statements on the table without running another role's code
// (its own, built-in or pgmq's only); otherwise what the table carries and
// what that does, as pgmq's refusal says it.
PGMQ_FUNCTION(pgmq_table_runs_foreign_code)
{
	RequireArgument(fcinfo, 0, "relation");
	const Oid relid = PG_GETARG_OID(0);
	LockReadable(relid);
	ForeignCode found;
	if (CheckTables(&relid, 1, &found) == 0)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(Reason(found));
}

// _tables_running_foreign_code(relations regclass[]) -> TABLE (relation
// regclass, reason text): the tables of the array that the rule refuses,
// found in one statement (an overview of every queue).
PGMQ_FUNCTION(pgmq_tables_running_foreign_code)
{
	RequireArgument(fcinfo, 0, "relations");
	BeginRowsResult(fcinfo);
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	Datum *elements = nullptr;
	bool *element_nulls = nullptr;
	int count = 0;
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(0), REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT, &elements, &element_nulls,
	                  &count);
	Oid *relids = static_cast<Oid *>(palloc(sizeof(Oid) * Max(count, 1)));
	int nrelids = 0;
	for (int i = 0; i < count; i++)
		if (!element_nulls[i]) {
			relids[nrelids++] = DatumGetObjectId(elements[i]);
			LockReadable(relids[nrelids - 1]);
		}
	ForeignCode *found = static_cast<ForeignCode *>(palloc(sizeof(ForeignCode) * Max(nrelids, 1)));
	const int nfound = nrelids == 0 ? 0 : CheckTables(relids, nrelids, found);
	for (int i = 0; i < nfound; i++) {
		Datum values[2] = {ObjectIdGetDatum(found[i].relid), PointerGetDatum(Reason(found[i]))};
		bool nulls[2] = {false, false};
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return Datum(0);
}
