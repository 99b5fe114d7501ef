// include/pgmq/pg/plan_cache.hpp
// Per-backend cache of prepared statements, keyed by queue table and
// statement, or by the statement alone for those not tied to a queue. Correctness across drop/re-create comes from Postgres' plan
// cache (a kept plan is re-analysed when a relation it uses changes); this
// cache only saves parsing and planning on every call.
#pragma once

#include "pgmq/core/statements.hpp"

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "executor/spi.h"
}

namespace pgmq::pg {

// The kept plan of statement (core::IsPerQueue) for queue, prepared on
// first use. The queue's tables are verified first (table_shape.hpp).
// Requires an SPI connection. May ereport.
SPIPlanPtr PlanFor(const QueueRef &queue, core::Statement statement);

// PlanFor, and the identity sequence of the queue table's msg_id, found
// when the plan's tables were last verified (for metrics).
SPIPlanPtr PlanFor(const QueueRef &queue, core::Statement statement, Oid *msg_id_sequence);

// The kept plan of a statement not tied to a queue (!core::IsPerQueue),
// prepared on first use. Requires an SPI connection. May ereport.
SPIPlanPtr PlanFor(core::Statement statement);

// For an error's context: the queue table (the key of a statement not tied
// to a queue: see PlanFor) and the statement of a kept plan; false when the
// plan is not in the cache. Never fails.
bool DescribeCachedPlan(SPIPlanPtr plan, const char **queue_table, core::Statement *statement);

// The type OID of a statement parameter type.
Oid ParamTypeOid(core::ParamType type) noexcept;

// _PG_init: the pgmq.plan_cache_size setting and the transaction callback
// that frees evicted plans.
void InitPlanCache();

}  // namespace pgmq::pg
