// src/pg/plan_cache.cpp
// Per-backend plan cache (see plan_cache.hpp). Entries live in their own
// context under CacheMemoryContext. At most pgmq.plan_cache_size plans are
// kept; beyond that the least recently used one is evicted. An evicted plan
// may still be running further up the stack (a trigger calling pgmq on
// another queue), so it is freed only when the transaction ends.
#include "pgmq/core/error.hpp"
#include "pgmq/core/statements.hpp"

#include <string>

#include "pgmq/pg/plan_cache.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "nodes/pg_list.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
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
};

HTAB *plan_table = nullptr;
MemoryContext cache_context = nullptr;
int plan_cache_size = 256;  // GUC pgmq.plan_cache_size
uint64 use_clock = 0;
List *evicted_plans = NIL;  // in the cache's context, freed at transaction end

Oid TypeOid(core::ParamType type) noexcept
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
	}
	return InvalidOid;
}

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

// Parses and plans the statement and moves it to permanent storage.
SPIPlanPtr Prepare(const QueueRef &queue, core::Statement statement)
{
	SPIPlanPtr plan = nullptr;
	RunCore([&] {
		const core::StatementShape &shape = core::ShapeOf(statement);
		Oid types[core::kMaxStatementParams];
		for (int i = 0; i < shape.nparams; i++)
			types[i] = TypeOid(shape.params[i]);
		const std::string sql = core::StatementSql(statement, queue.queue_table, queue.archive_table);
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

SPIPlanPtr PlanFor(const QueueRef &queue, core::Statement statement)
{
	PlanKey key;
	memset(&key, 0, sizeof key);  // dynahash compares raw bytes
	strlcpy(key.table, queue.queue_table, sizeof key.table);
	key.statement = static_cast<int>(statement);

	auto *entry = static_cast<PlanEntry *>(hash_search(PlanTable(), &key, HASH_FIND, nullptr));
	if (!entry) {
		// Prepare before entering, so a failed prepare never leaves a half-built entry.
		SPIPlanPtr plan = Prepare(queue, statement);
		while (hash_get_num_entries(plan_table) >= plan_cache_size)
			EvictLeastRecentlyUsed();
		entry = static_cast<PlanEntry *>(hash_search(plan_table, &key, HASH_ENTER, nullptr));
		entry->plan = plan;
	}
	entry->last_used = ++use_clock;
	return entry->plan;
}

void InitPlanCache()
{
	DefineCustomIntVariable("pgmq.plan_cache_size", "Most prepared pgmq statements a backend keeps.",
	                        "One statement per queue and operation; the least recently used is evicted beyond this.",
	                        &plan_cache_size, 256, 1, 1000000, PGC_USERSET, 0, nullptr, nullptr, nullptr);
	RegisterXactCallback(FreeEvictedPlans, nullptr);
}

}  // namespace pgmq::pg
