// src/pg/stream_plans.cpp
// The kept plans of a consumer group's statements (see stream_plans.hpp).
#include "pgmq/core/error.hpp"
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/stream_plans.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "nodes/parsenodes.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

namespace pgmq::pg {

namespace {

struct StreamPlanKey {
	Oid relid;  // the stream table for the statements that name it, else InvalidOid
	int statement;
};

struct StreamPlanEntry {
	StreamPlanKey key;
	SPIPlanPtr plan;
};

HTAB *stream_plans = nullptr;

constexpr int kMaxParams = 9;

struct Shape {
	bool per_stream;
	int nparams;
	Oid types[kMaxParams];
};

// In StreamStatement's order.
const Shape kShapes[] = {
	{false, 3, {TEXTOID, TEXTOID, TIDOID}},
	{false, 2, {TEXTOID, TEXTOID}},
	{false, 4, {TEXTOID, TEXTOID, FLOAT8OID, TIDOID}},
	{false, 3, {TEXTOID, TEXTOID, FLOAT8OID}},
	{true, 4, {TEXTOID, TEXTOID, INT4OID, TIDOID}},
	{true, 4, {TEXTOID, TEXTOID, INT4OID, TIDOID}},
	{false, 9, {TEXTOID, TEXTOID, INT8ARRAYOID, FLOAT8OID, PG_SNAPSHOTOID, XID8OID, INT8OID, TIMESTAMPTZOID, TIDOID}},
	{true, 4, {INT8ARRAYOID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	{false, 6, {TEXTOID, TEXTOID, INT8OID, FLOAT8OID, TIMESTAMPTZOID, TIDOID}},
	{false, 4, {TEXTOID, TEXTOID, PG_SNAPSHOTOID, TIDOID}},
	{false, 5, {TEXTOID, TEXTOID, INT8ARRAYOID, TIMESTAMPTZOID, TIDOID}},
	{false, 4, {TEXTOID, TEXTOID, INT8OID, TIDOID}},
	{false, 5, {TEXTOID, TEXTOID, INT8OID, FLOAT8OID, TIDOID}},
};
static_assert(sizeof kShapes / sizeof kShapes[0] == static_cast<size_t>(StreamStatement::Count));

std::string SqlOf(StreamStatement statement, const char *table)
{
	switch (statement) {
	case StreamStatement::LockGroup:
		return core::LockGroupSql(false);
	case StreamStatement::LockGroupByKey:
		return core::LockGroupSql(true);
	case StreamStatement::GroupState:
		return core::GroupStateSql(false);
	case StreamStatement::GroupStateByKey:
		return core::GroupStateSql(true);
	case StreamStatement::Window:
		return core::WindowMessagesSql(table, false);
	case StreamStatement::WindowCut:
		return core::WindowMessagesSql(table, true);
	case StreamStatement::RecordLease:
		return core::RecordLeaseSql();
	case StreamStatement::Emit:
		return core::EmitSql(table);
	case StreamStatement::Renew:
		return core::RenewLeaseSql();
	case StreamStatement::Anchor:
		return core::AnchorSql();
	case StreamStatement::Ack:
		return core::AckSql();
	case StreamStatement::Release:
		return core::ReleaseSql();
	case StreamStatement::LeaseOf:
	case StreamStatement::Count:
		break;
	}
	return core::LeaseOfSql();
}

SPIPlanPtr PlanOf(const QueueRef &stream, StreamStatement statement)
{
	if (stream_plans == nullptr) {
		HASHCTL ctl{};
		ctl.keysize = sizeof(StreamPlanKey);
		ctl.entrysize = sizeof(StreamPlanEntry);
		ctl.hcxt = CacheMemoryContext;
		stream_plans = hash_create("pgmq stream plans", 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	const Shape &shape = kShapes[static_cast<int>(statement)];
	StreamPlanKey key{};
	key.relid = shape.per_stream ? stream.queue_relid : InvalidOid;
	key.statement = static_cast<int>(statement);
	bool found = false;
	auto *entry = static_cast<StreamPlanEntry *>(hash_search(stream_plans, &key, HASH_ENTER, &found));
	if (found && entry->plan != nullptr)
		return entry->plan;
	entry->plan = nullptr;
	SPIPlanPtr plan = nullptr;
	RunCore([&] {
		const std::string sql = SqlOf(statement, stream.queue_table);
		// One generic plan: the values come from the group's row, and custom
		// plans cost a planning per call (about half of an ack's time).
		plan = CallPostgres([&] {
			return SPI_prepare_cursor(sql.c_str(), shape.nparams, const_cast<Oid *>(shape.types), CURSOR_OPT_GENERIC_PLAN);
		});
		if (plan == nullptr || CallPostgres([&] { return SPI_keepplan(plan); }) != 0)
			throw core::CoreError(core::ErrorKind::Internal, std::string("SPI_prepare failed: ") +
			                                                     SPI_result_code_string(SPI_result));
	});
	// Looked up again: preparing may have grown the table.
	entry = static_cast<StreamPlanEntry *>(hash_search(stream_plans, &key, HASH_ENTER, &found));
	entry->plan = plan;
	return plan;
}

}  // namespace

uint64 ExecuteStreamStatement(const QueueRef &stream, StreamStatement statement, Datum *values, const char *nulls)
{
	return ExecutePlan(PlanOf(stream, statement), values, nulls);
}

}  // namespace pgmq::pg
