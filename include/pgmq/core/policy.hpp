// include/pgmq/core/policy.hpp
// Delivery policies of a queue (docs/delivery.md): dead letters, retry with
// backoff, deduplication, retention. Their rules and the SQL of the rare
// statements (setting a policy, redrive, retention, expiry), run once per
// call; the per-message statements are in statements.hpp. Values are always
// parameters; table names are quoted by the core.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pgmq::core {

// The header a send carries its deduplication id in, and the header a
// dead-lettered message gets.
constexpr const char *kDeduplicationHeader = "x-pgmq-deduplication-id";
constexpr const char *kDeadLetterHeader = "x-pgmq-dead-letter";

// Argument rules; may throw CoreError(InvalidParameter).
void CheckMaxDeliveries(int64_t max_deliveries);            // >= 1
void CheckBackoff(int64_t base_seconds, int64_t max_seconds);  // 0 <= base <= max
void CheckRedriveQuantity(int64_t qty);                      // >= 0

// The delay of a retry: min(base * 2^(read_ct - 1), max) seconds (read_ct
// below 1 counts as 1), before jitter. Matches Retry's SQL.
double BackoffSeconds(int64_t base_seconds, int64_t max_seconds, int64_t read_ct);

// The jitter factor applied to a backoff: uniform in [0.9, 1.0], from a
// uniform random number in [0, 1), so a retry never waits longer than max
// and consumers that failed together spread out.
double BackoffJitter(double uniform01);

// ($1 lowercased queue name, as in q_<name>; $2 the queue table's OID) ->
// the queue's policy row, if it was written for that table: queue_name,
// dead_letter_queue, max_deliveries, retry_base_seconds, retry_max_seconds,
// deduplication_window, retention_max_age, retention_archive_max_age,
// dead_letter_relid (the dead-letter queue's table when it was set),
// paused (boolean), priority_levels.
std::string LoadPolicySql();

// ($1 queue name, any ASCII case) -> the queue's name as pgmq.meta has it.
std::string MetaQueueNameSql();

// Which policy a set_*/clear_* call changes.
enum class PolicyKind { DeadLetter, RetryBackoff, Deduplication, Retention, Priority, Pause };

// Upsert of one policy's columns of a queue's row: ($1 queue name as in
// meta, $2 the queue table (regclass), $3, $4 the policy's values).
// DeadLetter: ($3 dead-letter queue text, $4 max deliveries int4, $5 the
// dead-letter queue's table); RetryBackoff: ($3 base int4, $4 max int4);
// Deduplication: ($3 window interval); Retention: ($3 max_age interval, $4
// archive_max_age interval); Priority: ($3 levels int4); Pause: ($3
// paused_at timestamptz).
std::string SetPolicySql(PolicyKind kind);

// Before SetPolicySql: the rows of queue $1 (any ASCII case) written for
// another table than $2 (one dropped without drop_queue): never merged
// into the new table's policy.
std::string DeleteStalePolicySql();

// Clears one policy's columns of queue $1, then deletes the row when no
// policy is left.
std::string ClearPolicySql(PolicyKind kind);
std::string DeleteEmptyPolicySql();

// Retention, in batches of at most $2 rows, skipping rows other
// transactions hold (a reader's open claim, an ack in flight): ($1 cutoff,
// $2 batch size) -> rows deleted. Queue messages by enqueued_at, archived
// ones by archived_at.
std::string RetentionQueueBatchSql(std::string_view queue_table);
std::string RetentionArchiveBatchSql(std::string_view archive_table);

// Expired deduplication ids of queue $1 (expires_at <= $2), at most $3 rows.
std::string ExpireDeduplicationBatchSql();

// After a deduplicated send raced another transaction's first send of an id
// (statements.hpp, SendDeduplicated): ($1 msg_ids this send inserted for
// ids it lost, $2 every element's msg_id, $3 every element's id or NULL, $4
// queue name, $5 the queue table) -> each element's msg_id, in order: the
// first send's for an id, else its own. Deletes the messages $1 from
// pgmq.<queue_table>.
std::string DeduplicatedResolveSql(std::string_view queue_table);

// drop_queue: the queue's deduplication ids ($1 queue name as in meta).
std::string DeleteDeduplicationSql();

// Every policy row but a pause alone, by queue name (the columns of LoadPolicySql, then
// queue_relid and dead_letter_relid, then priority_levels); and the number of messages of queue $1
// waiting in pgmq.<dead_letter_table>.
std::string ListPoliciesSql();
std::string DeadLetteredCountSql(std::string_view dead_letter_table);

// queue_state_all: () -> per queue of pgmq.meta, by name: queue_name,
// paused_at, priority_levels, dead_letter_queue, queue_relid and
// dead_letter_relid (the tables the policy row was written for; NULL
// without one), and the names of the queues whose dead-letter queue it is
// (text[]).
std::string QueueStatesSql();

// queue_state of one queue without reading pgmq.meta, which a role given
// grant_queue_access may not: ($1 its name as created, $2 its table's OID)
// -> QueueStatesSql's row for it, the policy row found by the table it was
// written for.
std::string QueueStateSql();

// Queues with a retention policy ($1 none): queue_name. (Maintenance reads
// each one's policy with LoadPolicySql, which skips rows of dropped tables.)
std::string RetentionQueuesSql();

// How many rows one retention or expiry batch deletes.
constexpr int64_t kRetentionBatch = 1000;

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
