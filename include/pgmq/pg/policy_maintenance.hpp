// include/pgmq/pg/policy_maintenance.hpp
// The maintenance of delivery policies: retention (messages and archived
// messages older than the policy's ages) and the expiry of deduplication
// ids, in batches of core::kRetentionBatch rows that skip rows other
// transactions hold, so no batch waits for a reader or holds many locks.
// Adapter internals: may ereport; require SPI.
#pragma once

#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// Retention of one queue as the current user, in one transaction:
// batches until none is left (a row held by another transaction stays for
// the next run). Returns the rows deleted (0 without a retention policy).
int64 ApplyRetentionBatches(const QueueRef &queue, const QueuePolicy &policy, int64 max_batches);

// Retention and deduplication expiry of every queue with such a policy
// (only_queue_table: of that queue, q_x), each batch as the queue table's
// owner under SECURITY_RESTRICTED_OPERATION and committed as mode says. A
// queue whose owner's privileges the current user lacks is skipped with a
// WARNING, as partition maintenance skips tables; so is a failed batch.
// Memory for the queue list comes from context. Adds to *deleted.
void MaintainPolicies(const char *only_queue_table, MemoryContext context, Commits mode, int64 *deleted);

}  // namespace pgmq::pg
