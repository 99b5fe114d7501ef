// src/pg/plan_cache.cpp
// Per-backend plan cache (see plan_cache.hpp). Entries live in their own
// context under CacheMemoryContext. At most pgmq.plan_cache_size plans are
// kept; beyond that the least recently used one is evicted. An evicted plan
// may still be running further up the stack (a trigger calling pgmq on
// another queue), so it is freed only when the transaction ends.
//
// The tables a per-queue plan uses are verified (table_shape.hpp: their
// shape, and that they run no other role's code with the caller's rights)
// when it is prepared, when the queue name resolves to another relation,
// when another user calls, and after any invalidation of those tables (ALTER,
// CREATE INDEX, CREATE TRIGGER, CREATE POLICY, ...), of a table of their
// tree or of a role (table_trust.hpp): a relcache callback marks the entry,
// and the next call verifies again. Each call first locks the tables with
// the statement's own lock, which processes the invalidations that arrived
// and makes DDL that would attach code to them wait: the hot path then only
// compares a flag, two OIDs and a counter. Postgres re-plans a kept plan
// after an ALTER by itself; the result checks in executor.cpp guard the
// window between an ALTER's commit and this backend seeing its invalidation.
#include "pgmq/core/error.hpp"
#include "pgmq/core/statements.hpp"

#include <string>

#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/lmgr.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace pgmq::pg {

namespace {

struct PlanKey {
	char table[NAMEDATALEN];
	int statement;
};

struct PlanEntry {
	PlanKey key;  // must be first: dynahash's convention
	SPIPlanPtr plan;
	uint64 last_used;
	Oid queue_relid;    // the tables verified for this plan (InvalidOid: none)
	Oid archive_relid;
	Oid msg_id_sequence;  // of the queue table, for Metrics and RecentSend only
	Oid verified_user;    // the user the tables were verified for
	uint64 trust_generation;  // TrustGeneration() when they were
	bool queue_tree;      // whether the tables have partitions (or children) to lock
	bool archive_tree;
	bool verified;      // cleared by an invalidation of either table
};

// The tables a statement was verified against.
struct VerifiedTables {
	Oid queue_relid = InvalidOid;
	Oid archive_relid = InvalidOid;
	Oid msg_id_sequence = InvalidOid;
	bool queue_tree = false;
	bool archive_tree = false;
};

HTAB *plan_table = nullptr;
MemoryContext cache_context = nullptr;
int plan_cache_size = 1024;  // GUC pgmq.plan_cache_size
uint64 use_clock = 0;
List *evicted_plans = NIL;  // in the cache's context, freed at transaction end
uint64 invalidations = 0;   // relcache invalidations seen, to detect one during verification

}  // namespace

Oid ParamTypeOid(core::ParamType type) noexcept
{
	switch (type) {
	case core::ParamType::Int8:
		return INT8OID;
	case core::ParamType::Text:
		return TEXTOID;
	case core::ParamType::Jsonb:
		return JSONBOID;
	case core::ParamType::Timestamptz:
		return TIMESTAMPTZOID;
	case core::ParamType::Int8Array:
		return INT8ARRAYOID;
	case core::ParamType::JsonbArray:
		return JSONBARRAYOID;
	case core::ParamType::Regclass:
		return REGCLASSOID;
	case core::ParamType::TextArray:
		return TEXTARRAYOID;
	case core::ParamType::Float8:
		return FLOAT8OID;
	}
	return InvalidOid;
}

namespace {

HTAB *PlanTable()
{
	if (!plan_table) {
		HASHCTL ctl;
		memset(&ctl, 0, sizeof ctl);
		ctl.keysize = sizeof(PlanKey);
		ctl.entrysize = sizeof(PlanEntry);
		cache_context = AllocSetContextCreate(CacheMemoryContext, "pgmq plan cache", ALLOCSET_SMALL_SIZES);
		ctl.hcxt = cache_context;
		plan_table = hash_create("pgmq plans", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return plan_table;
}

// Moves the least recently used plan to the evicted list.
void EvictLeastRecentlyUsed()
{
	HASH_SEQ_STATUS scan;
	PlanEntry *oldest = nullptr;
	hash_seq_init(&scan, plan_table);
	for (auto *entry = static_cast<PlanEntry *>(hash_seq_search(&scan)); entry;
	     entry = static_cast<PlanEntry *>(hash_seq_search(&scan)))
		if (!oldest || entry->last_used < oldest->last_used)
			oldest = entry;
	if (!oldest)
		return;
	MemoryContext previous = MemoryContextSwitchTo(cache_context);
	evicted_plans = lappend(evicted_plans, oldest->plan);
	MemoryContextSwitchTo(previous);
	hash_search(plan_table, &oldest->key, HASH_REMOVE, nullptr);
}

// No pgmq call is running once a transaction ends: evicted plans can go.
void FreeEvictedPlans(XactEvent event, void *)
{
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT && event != XACT_EVENT_PREPARE)
		return;
	ListCell *cell;
	foreach (cell, evicted_plans)
		SPI_freeplan(static_cast<SPIPlanPtr>(lfirst(cell)));
	list_free(evicted_plans);
	evicted_plans = NIL;
}

// Marks the entries that use relation relid (every entry for InvalidOid, a
// cache reset) for verification on their next use.
void ForgetVerification(Datum, Oid relid)
{
	invalidations++;
	ForgetPolicies(relid);
	if (!plan_table)
		return;
	HASH_SEQ_STATUS scan;
	hash_seq_init(&scan, plan_table);
	for (auto *entry = static_cast<PlanEntry *>(hash_seq_search(&scan)); entry;
	     entry = static_cast<PlanEntry *>(hash_seq_search(&scan)))
		if (entry->verified &&
		    (!OidIsValid(relid) || entry->queue_relid == relid || entry->archive_relid == relid))
			entry->verified = false;
}

bool UsesArchive(core::Statement statement)
{
	return statement == core::Statement::Archive || statement == core::Statement::ArchiveBatch;
}

// The lock the statement takes on its tables, taken before its check.
LOCKMODE StatementLock(core::Statement statement)
{
	switch (statement) {
	case core::Statement::Metrics:
	case core::Statement::LiveHead:
	case core::Statement::RecentSend:
	case core::Statement::Peek:
		return AccessShareLock;
	default:
		return RowExclusiveLock;
	}
}

// Verifies the tables the statement uses (table_shape.hpp), the queue's
// being queue_relid. May ereport.
VerifiedTables VerifyTables(const QueueRef &queue, Oid queue_relid, core::Statement statement, LOCKMODE lockmode)
{
	VerifiedTables tables;
	const Oid namespace_oid = get_namespace_oid("pgmq", false);
	tables.queue_relid = queue_relid;
	VerifyTableShape(tables.queue_relid, queue.queue_table, TableRole::Queue, lockmode);
	tables.queue_tree = has_subclass(tables.queue_relid);
	// An identity sequence changes only through ALTER TABLE on its table,
	// which invalidates this verification.
	if (statement == core::Statement::Metrics || statement == core::Statement::RecentSend)
		tables.msg_id_sequence = MsgIdSequence(tables.queue_relid, queue.queue_table);
	if (UsesArchive(statement)) {
		tables.archive_relid = get_relname_relid(queue.archive_table, namespace_oid);
		VerifyTableShape(tables.archive_relid, queue.archive_table, TableRole::Archive, lockmode);
		tables.archive_tree = has_subclass(tables.archive_relid);
	}
	return tables;
}

// Parses and plans the statement and moves it to permanent storage.
SPIPlanPtr Prepare(const char *queue_table, const char *archive_table, core::Statement statement)
{
	SPIPlanPtr plan = nullptr;
	RunCore([&] {
		const core::StatementShape &shape = core::ShapeOf(statement);
		Oid types[core::kMaxStatementParams];
		for (int i = 0; i < shape.nparams; i++)
			types[i] = ParamTypeOid(shape.params[i]);
		const std::string sql = core::StatementSql(statement, queue_table, archive_table);
		const int options = shape.generic_plan ? CURSOR_OPT_GENERIC_PLAN : 0;
		plan = CallPostgres([&] { return SPI_prepare_cursor(sql.c_str(), shape.nparams, types, options); });
		if (!plan)
			throw core::CoreError(core::ErrorKind::Internal,
			                      std::string("SPI_prepare failed: ") + SPI_result_code_string(SPI_result));
		const int rc = CallPostgres([&] { return SPI_keepplan(plan); });
		if (rc != 0)
			throw core::CoreError(core::ErrorKind::Internal, "SPI_keepplan failed");
	});
	return plan;
}

}  // namespace

namespace {

// Locks the queue's table with lockmode and returns its OID. A table
// dropped while this waited (and perhaps made again under its name by the
// transaction that dropped it) is looked up again by name, as the
// statement itself would: 42P01 when there is none.
Oid LockQueueTable(const QueueRef &queue, LOCKMODE lockmode)
{
	LockRelationOid(queue.queue_relid, lockmode);
	if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(queue.queue_relid)))
		return queue.queue_relid;
	UnlockRelationOid(queue.queue_relid, lockmode);
	const Oid relid = get_relname_relid(queue.queue_table, get_namespace_oid("pgmq", false));
	if (!OidIsValid(relid))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation \"pgmq.%s\" does not exist", queue.queue_table)));
	LockRelationOid(relid, lockmode);
	return relid;
}

// The entry of statement for queue (nullptr: a statement not tied to a
// queue, whose key has an empty table name and which verifies no table).
SPIPlanPtr CachedPlan(const QueueRef *queue, core::Statement statement, Oid *msg_id_sequence)
{
	if (core::IsPerQueue(statement) != (queue != nullptr))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
		                errmsg("pgmq statement %d used %s a queue", static_cast<int>(statement),
		                       queue ? "with" : "without")));
	PlanKey key;
	memset(&key, 0, sizeof key);  // dynahash compares raw bytes
	if (queue)
		strlcpy(key.table, queue->queue_table, sizeof key.table);
	key.statement = static_cast<int>(statement);

	auto *entry = static_cast<PlanEntry *>(hash_search(PlanTable(), &key, HASH_FIND, nullptr));
	const LOCKMODE lockmode = StatementLock(statement);
	Oid queue_relid = queue ? queue->queue_relid : InvalidOid;
	if (queue) {
		// The statement's own locks, before the check: the invalidations
		// that arrived are processed (lock acquisition does it), and DDL that
		// would attach code to the tables waits for this transaction. An
		// invalidation only marks entries, never removes one.
		queue_relid = LockQueueTable(*queue, lockmode);
		if (entry && entry->queue_tree)
			LockTree(queue_relid, lockmode);
		if (entry && OidIsValid(entry->archive_relid)) {
			LockRelationOid(entry->archive_relid, lockmode);
			if (entry->archive_tree)
				LockTree(entry->archive_relid, lockmode);
		}
	}
	const Oid user = GetUserId();
	if (!entry || (queue && (!entry->verified || entry->queue_relid != queue_relid ||
	                         entry->verified_user != user || entry->trust_generation != TrustGeneration()))) {
		// Verify, then prepare, before entering or updating the entry, so a
		// failure never leaves a half-built or wrongly verified entry. Catalog
		// lookups may process invalidations, but never add or remove entries.
		const uint64 invalidations_before = invalidations;
		const uint64 generation = TrustGeneration();
		VerifiedTables tables;
		if (queue)
			tables = VerifyTables(*queue, queue_relid, statement, lockmode);
		if (!entry) {
			SPIPlanPtr plan = Prepare(queue ? queue->queue_table : "", queue ? queue->archive_table : "", statement);
			while (hash_get_num_entries(plan_table) >= plan_cache_size)
				EvictLeastRecentlyUsed();
			entry = static_cast<PlanEntry *>(hash_search(plan_table, &key, HASH_ENTER, nullptr));
			entry->plan = plan;
		}
		entry->queue_relid = tables.queue_relid;
		entry->archive_relid = tables.archive_relid;
		entry->msg_id_sequence = tables.msg_id_sequence;
		entry->queue_tree = tables.queue_tree;
		entry->archive_tree = tables.archive_tree;
		entry->verified_user = user;
		entry->trust_generation = generation;
		// An invalidation that arrived meanwhile may concern these tables:
		// verify again next time.
		entry->verified = invalidations == invalidations_before;
	}
	entry->last_used = ++use_clock;
	if (msg_id_sequence)
		*msg_id_sequence = entry->msg_id_sequence;
	return entry->plan;
}

}  // namespace

SPIPlanPtr PlanFor(const QueueRef &queue, core::Statement statement) { return CachedPlan(&queue, statement, nullptr); }

SPIPlanPtr PlanFor(const QueueRef &queue, core::Statement statement, Oid *msg_id_sequence)
{
	return CachedPlan(&queue, statement, msg_id_sequence);
}

SPIPlanPtr PlanFor(core::Statement statement) { return CachedPlan(nullptr, statement, nullptr); }

bool DescribeCachedPlan(SPIPlanPtr plan, const char **queue_table, core::Statement *statement)
{
	if (!plan_table)
		return false;
	HASH_SEQ_STATUS scan;
	hash_seq_init(&scan, plan_table);
	for (auto *entry = static_cast<PlanEntry *>(hash_seq_search(&scan)); entry;
	     entry = static_cast<PlanEntry *>(hash_seq_search(&scan)))
		if (entry->plan == plan) {
			hash_seq_term(&scan);
			*queue_table = entry->key.table;
			*statement = static_cast<core::Statement>(entry->key.statement);
			return true;
		}
	return false;
}

void InitPlanCache()
{
	DefineCustomIntVariable("pgmq.plan_cache_size", "Most prepared pgmq statements a backend keeps.",
	                        "One statement per queue and operation; the least recently used is evicted beyond this.",
	                        &plan_cache_size, 1024, 1, 1000000, PGC_USERSET, 0, nullptr, nullptr, nullptr);
	RegisterXactCallback(FreeEvictedPlans, nullptr);
	CacheRegisterRelcacheCallback(ForgetVerification, Datum(0));
}

}  // namespace pgmq::pg
