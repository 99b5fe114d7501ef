// src/pg/table_trust.cpp
// Running the rule for what a queue's table may carry (table_trust.hpp).
// The rule is one statement (core::ForeignCodeSql), planned once per
// backend; a pass is remembered per table and user in a hash table under
// CacheMemoryContext, until an invalidation of the table, of a table of its
// tree, or of any role or membership (a membership decides whose privileges
// a role has).
#include "pgmq/core/error.hpp"
#include "pgmq/core/trust.hpp"

#include <string>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "catalog/pg_inherits.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

namespace {

// Users remembered per table: the roles that call pgmq on one queue are few
// (its owner, its applications, a monitor); a further one replaces the oldest.
constexpr int kUsersPerTable = 4;

struct PassEntry {
	Oid relid;  // key, must be first
	int users;
	Oid user[kUsersPerTable];
};

// A table of a remembered table's tree: its invalidation forgets the root.
struct MemberEntry {
	Oid member;  // key, must be first
	Oid root;
};

HTAB *passes = nullptr;
HTAB *members = nullptr;
uint64 generation = 1;
uint64 invalidations = 0;  // seen, to keep no pass an invalidation overtook
SPIPlanPtr rule_plan = nullptr;

HTAB *OidTable(const char *name, Size entry_size)
{
	HASHCTL ctl;
	memset(&ctl, 0, sizeof ctl);
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = entry_size;
	ctl.hcxt = CacheMemoryContext;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

void ForgetEverything()
{
	generation++;
	for (HTAB *table : {passes, members}) {
		if (!table)
			continue;
		HASH_SEQ_STATUS scan;
		hash_seq_init(&scan, table);
		// Removing the entry just returned is allowed during a scan.
		while (void *entry = hash_seq_search(&scan))
			hash_search(table, entry, HASH_REMOVE, nullptr);
	}
}

// Relcache callback: no catalog access here, only the hash tables.
void ForgetTable(Datum, Oid relid)
{
	invalidations++;
	if (!OidIsValid(relid)) {
		ForgetEverything();
		return;
	}
	if (passes)
		hash_search(passes, &relid, HASH_REMOVE, nullptr);
	if (!members)
		return;
	auto *member = static_cast<MemberEntry *>(hash_search(members, &relid, HASH_FIND, nullptr));
	if (!member)
		return;
	const Oid root = member->root;
	hash_search(members, &relid, HASH_REMOVE, nullptr);
	if (passes)
		hash_search(passes, &root, HASH_REMOVE, nullptr);
	// The root's own invalidation is not coming: plans verified against it
	// must look again.
	generation++;
}

// Syscache callback for roles and memberships.
void ForgetRoles(Datum, int, uint32)
{
	invalidations++;
	ForgetEverything();
}

bool Passed(Oid relid, Oid user)
{
	if (!passes)
		return false;
	auto *entry = static_cast<PassEntry *>(hash_search(passes, &relid, HASH_FIND, nullptr));
	if (!entry)
		return false;
	for (int i = 0; i < entry->users; i++)
		if (entry->user[i] == user)
			return true;
	return false;
}

// Remembers relid's pass for user, and which tables its tree holds, unless
// an invalidation came after the rule's statement began (seen: the count
// then): it may have concerned this table.
void Remember(Oid relid, Oid user, uint64 seen)
{
	if (!passes) {
		passes = OidTable("pgmq table trust", sizeof(PassEntry));
		members = OidTable("pgmq table trust trees", sizeof(MemberEntry));
	}
	// A missing relation (dropped, or an OID of nothing) has no tree, and
	// find_all_inheritors would fail looking for it.
	List *tree = get_rel_relkind(relid) == '\0' ? NIL : find_all_inheritors(relid, NoLock, nullptr);
	if (invalidations != seen) {
		list_free(tree);
		return;
	}
	ListCell *cell;
	foreach (cell, tree) {
		Oid member = lfirst_oid(cell);
		if (member == relid)
			continue;
		auto *entry = static_cast<MemberEntry *>(hash_search(members, &member, HASH_ENTER, nullptr));
		entry->root = relid;
	}
	list_free(tree);
	bool found = false;
	auto *entry = static_cast<PassEntry *>(hash_search(passes, &relid, HASH_ENTER, &found));
	if (!found)
		entry->users = 0;
	if (entry->users == kUsersPerTable) {
		memmove(&entry->user[0], &entry->user[1], sizeof(Oid) * (kUsersPerTable - 1));
		entry->users--;
	}
	entry->user[entry->users++] = user;
}

// The rule's plan, kept for the backend's life. Requires SPI.
SPIPlanPtr RulePlan()
{
	if (rule_plan)
		return rule_plan;
	SPIPlanPtr plan = nullptr;
	RunCore([&] {
		const std::string sql = core::ForeignCodeSql();
		Oid types[1] = {OIDARRAYOID};
		// One plan for any table: the statement is all index lookups.
		plan = CallPostgres([&] { return SPI_prepare_cursor(sql.c_str(), 1, types, CURSOR_OPT_GENERIC_PLAN); });
		if (!plan)
			throw core::CoreError(core::ErrorKind::Internal,
			                      std::string("SPI_prepare failed: ") + SPI_result_code_string(SPI_result));
		if (CallPostgres([&] { return SPI_keepplan(plan); }) != 0)
			throw core::CoreError(core::ErrorKind::Internal, "SPI_keepplan failed");
	});
	rule_plan = plan;
	return rule_plan;
}

}  // namespace

int CheckTables(const Oid *relids, int count, ForeignCode *found)
{
	const Oid user = GetUserId();
	Oid *unknown = static_cast<Oid *>(palloc(sizeof(Oid) * Max(count, 1)));
	int nunknown = 0;
	for (int i = 0; i < count; i++)
		if (!Passed(relids[i], user))
			unknown[nunknown++] = relids[i];
	if (nunknown == 0)
		return 0;
	const uint64 invalidations_before = invalidations;
	MemoryContext caller = CurrentMemoryContext;
	Datum *elements = static_cast<Datum *>(palloc(sizeof(Datum) * nunknown));
	for (int i = 0; i < nunknown; i++)
		elements[i] = ObjectIdGetDatum(unknown[i]);
	Datum args[1] = {PointerGetDatum(construct_array(elements, nunknown, OIDOID, sizeof(Oid), true, TYPALIGN_INT))};
	SpiConnect();
	// The estimates of a catalog walk are far off (millions of rows for a
	// few): compiling it would cost a second for a millisecond's work, and
	// hash tables sized for them would take megabytes of every backend that
	// checks a table (work_mem caps their size; the real rows are few).
	const int nest_level = NewGUCNestLevel();
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("work_mem", "64", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	// A fresh snapshot: what runs is what the relcache sees, every committed
	// change, which the snapshot of a REPEATABLE READ transaction may not.
	const int rc = SPI_execute_snapshot(RulePlan(), args, nullptr, GetLatestSnapshot(), InvalidSnapshot, true, false, 0);
	AtEOXact_GUC(true, nest_level);
	if (rc != SPI_OK_SELECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
		                errmsg("pgmq could not check what a queue's table runs: %s", SPI_result_code_string(rc))));
	int nfound = 0;
	for (uint64 row = 0; row < SPI_processed && nfound < count; row++) {
		bool isnull = true;
		const Datum root = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			continue;
		const char *carrier = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 2);
		const char *problem = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 3);
		found[nfound].relid = DatumGetObjectId(root);
		found[nfound].carrier = MemoryContextStrdup(caller, carrier ? carrier : "an object");
		found[nfound].problem = MemoryContextStrdup(caller, problem ? problem : "runs code that is not pgmq's");
		nfound++;
	}
	SpiFinish();
	for (int i = 0; i < nunknown; i++) {
		bool refused = false;
		for (int j = 0; j < nfound && !refused; j++)
			refused = found[j].relid == unknown[i];
		if (!refused)
			Remember(unknown[i], user, invalidations_before);
	}
	pfree(unknown);
	return nfound;
}

void RequireOwnCodeOnly(Oid relid, const char *kind, const char *table)
{
	ForeignCode found;
	if (CheckTables(&relid, 1, &found) == 0)
		return;
	ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
	                errmsg("%s \"pgmq.%s\" carries %s, which %s", kind, table, found.carrier, found.problem),
	                errdetail("pgmq would run it with the rights of role \"%s\", which its owner does not have.",
	                          GetUserNameFromId(GetUserId(), false)),
	                errhint("%s", core::kForeignCodeHint)));
}

uint64 TrustGeneration() { return generation; }

void LockTree(Oid relid, LOCKMODE lockmode)
{
	// has_subclass fails on a relation dropped meanwhile; such has no tree.
	if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)) && has_subclass(relid))
		list_free(find_all_inheritors(relid, lockmode, nullptr));
}

void InitTableTrust()
{
	CacheRegisterRelcacheCallback(ForgetTable, Datum(0));
	CacheRegisterSyscacheCallback(AUTHOID, ForgetRoles, Datum(0));
	CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, ForgetRoles, Datum(0));
}

}  // namespace pgmq::pg
