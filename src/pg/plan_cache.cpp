// src/pg/plan_cache.cpp
// Per-backend plan cache (see plan_cache.hpp). Entries live in their own
// context under CacheMemoryContext. Entries are never freed: a backend keeps
// at most one plan per (queue name it has used, statement); docs/performance.md
// gives the memory this costs per queue.
#include "pgmq/core/error.hpp"
#include "pgmq/core/statements.hpp"

#include <string>

#include "pgmq/pg/plan_cache.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
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
};

HTAB *plan_table = nullptr;

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
		ctl.hcxt = AllocSetContextCreate(CacheMemoryContext, "pgmq plan cache", ALLOCSET_SMALL_SIZES);
		plan_table = hash_create("pgmq plans", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return plan_table;
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
	if (entry)
		return entry->plan;
	// Prepare before entering, so a failed prepare never leaves a half-built entry.
	SPIPlanPtr plan = Prepare(queue, statement);
	entry = static_cast<PlanEntry *>(hash_search(PlanTable(), &key, HASH_ENTER, nullptr));
	entry->plan = plan;
	return plan;
}

}  // namespace pgmq::pg
