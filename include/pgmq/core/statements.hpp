// include/pgmq/core/statements.hpp
// The SQL text of every per-message statement. The adapter prepares each one
// once per backend and queue and re-executes it with parameters: values are
// always $n parameters, never text. Every function and operator is
// schema-qualified so a hostile search_path cannot redirect a statement.
#pragma once

#include <string>
#include <string_view>

namespace pgmq::core {

// Parameter types, mapped to type OIDs by the adapter.
enum class ParamType : unsigned char { Int8, Text, Jsonb, Timestamptz, Int8Array, JsonbArray, Regclass, TextArray, Float8 };

enum class Statement : unsigned char {
	Send,             // ($1 msg jsonb, $2 headers jsonb, $3 vt) -> msg_id
	SendBatch,        // ($1 msgs jsonb[], $2 headers jsonb[], $3 vt) -> msg_id per element
	Read,             // ($1 now, $2 new vt, $3 qty, $4 head: lowest live msg_id) -> message rows
	ReadConditional,  // ($1..$3 as Read, $4 conditional jsonb, $5 head), containment filter
	Pop,              // ($1 now, $2 qty, $3 head) -> deleted message rows
	SetVt,            // ($1 msg_id, $2 vt) -> message row
	SetVtBatch,       // ($1 msg_ids, $2 vt) -> message rows
	Delete,           // ($1 msg_id) -> msg_id
	DeleteBatch,      // ($1 msg_ids) -> msg_id per deleted row
	Archive,          // ($1 msg_id) -> msg_id
	ArchiveBatch,     // ($1 msg_ids) -> msg_id per archived row
	Metrics,          // ($1 queue name, $2 msg_id identity sequence) -> metrics_result, with
	                  //  default_partition_length NULL: the adapter's
	// FIFO group reads (fifo.hpp): ($1 now, $2 new vt, $3 qty) -> message rows in
	// delivery order. *Indexed finds the group heads through q_<name>_fifo_idx.
	ReadGrouped,
	ReadGroupedIndexed,
	ReadGroupedRr,
	ReadGroupedRrIndexed,
	ReadGroupedHead,
	ReadGroupedHeadIndexed,
	LiveHead,         // ($1 from msg_id) -> (lowest live msg_id >= $1 or NULL, whether any
	                  //  prepared transaction exists): the queue's head (head_hint.hpp)
	RecentSend,       // ($1 window ids, $2 msg_id identity sequence) -> (last id, msg_id,
	                  //  seconds since its enqueued_at): the send-rate sample of partition_status
	// Delivery policies (policy.hpp). Only queues with the policy use them.
	SendDeduplicated,       // Send + ($4 queue name, $5 now, $6 expires_at, $7 queue table) -> (msg_id, raced, dedup id)
	SendBatchDeduplicated,  // SendBatch + ($4..$7 as above) -> (msg_id, raced, dedup id) per element
	Retry,                  // ($1 msg_id, $2 now, $3 base s, $4 max s, $5 jitter factor, $6 reason or
	                        //  NULL: appended to x-pgmq-failures) -> message row
	Peek,             // ($1 after msg_id, $2 qty) -> message rows in msg_id order, untouched
	QueueState,       // ($1 now) -> (visible, leased, delayed) message counts (queue_state)
	// Read, ReadConditional and Pop of a queue with priorities (priority.hpp):
	// the same parameters, highest priority first, then lowest msg_id.
	ReadPriority,
	ReadConditionalPriority,
	PopPriority,
	// Dead-letter claims: ($1 now, $2 new vt, $3 qty, $4 max deliveries, $5 source
	// queue name[, $6 condition]) and, for the two plain reads, last, the head
	// (as Read); their SQL names the dead-letter queue's table too
	// (core::DeadLetterSql), so the policy cache keeps their plans, not PlanFor.
	ReadDeadLetter,
	ReadConditionalDeadLetter,
	ReadGroupedDeadLetter,
	ReadGroupedIndexedDeadLetter,
	ReadGroupedRrDeadLetter,
	ReadGroupedRrIndexedDeadLetter,
	ReadGroupedHeadDeadLetter,
	ReadGroupedHeadIndexedDeadLetter,
	ReadPriorityDeadLetter,
	ReadConditionalPriorityDeadLetter,
	// Not per queue (IsPerQueue false: their plan-cache entry is the statement's own):
	NotifyThrottle,   // ($1 queue name, $2 now) -> one row when the throttle was stamped (notify.hpp)
	SendTopic,        // ($1 routing key, $2 msg, $3 headers, $4 vt) -> queues sent to (topic.hpp)
	SendBatchTopic,   // ($1 routing key, $2 msgs, $3 headers, $4 vt) -> (queue_name, msg_id) rows
	NotifyState,      // ($1 queue name) -> (throttle_interval_ms, last_notified_at) (notify.hpp)
	Count             // number of statements, not a statement
};

// Whether the statement reads or writes one queue's tables (and so is
// prepared per queue); the others are listed after the dead-letter claims.
constexpr bool IsPerQueue(Statement statement) { return statement <= Statement::ReadConditionalPriorityDeadLetter; }

// Whether the statement is a dead-letter claim (its SQL: core::DeadLetterSql).
constexpr bool IsDeadLetterClaim(Statement statement)
{
	return statement >= Statement::ReadDeadLetter && statement <= Statement::ReadConditionalPriorityDeadLetter;
}

constexpr int kMaxStatementParams = 7;

struct StatementShape {
	int nparams;
	ParamType params[kMaxStatementParams];
	// Always run the one plan prepared for any parameters. Set where the
	// planner's guess for a parameter (a LIMIT $n is taken as 10% of the
	// table) would otherwise make it re-plan on every call.
	bool generic_plan = false;
};

// Parameter list of a statement.
const StatementShape &ShapeOf(Statement statement);

// SQL text of a statement for the queue whose tables are pgmq.<queue_table>
// and pgmq.<archive_table> (unquoted names). May throw CoreError(Internal).
std::string StatementSql(Statement statement, std::string_view queue_table, std::string_view archive_table);

// The claim of a queue with a dead-letter policy, for the claim statement
// `claim` (Read, ReadConditional, ReadGrouped*): in one statement, the rows
// the claim picks and locks that were delivered max deliveries ($4) times
// already move to pgmq.<dead_letter_table> (headers plus x-pgmq-dead-letter),
// the others are claimed and returned as by `claim`. Built from the same
// helpers as the plain claim, so both pick the same rows. May throw.
std::string DeadLetterSql(Statement claim, std::string_view queue_table, std::string_view dead_letter_table);

// The CTEs `moved` and `dead` of a dead-letter claim on q (quoted,
// qualified): the rows of CTE `picked` (a msg_id column, rows locked by the
// claim) whose read_ct reached $4 are deleted from q and inserted into
// pgmq.<dead_letter_table>, visible at $1, their headers plus
// x-pgmq-dead-letter {queue: $5, msg_id, read_ct, enqueued_at, moved_at: $1,
// reason: kDeliveryLimitReason}.
std::string DeadLetterMoveSql(const std::string &q, std::string_view dead_letter_table, const std::string &picked);

// What a statement does, for the short context line of its errors
// ("<action> queue "jobs"<detail>"), in place of its SQL text.
struct StatementStep {
	const char *action;  // "reading", "sending to", ...
	const char *detail;  // "" or ", moving ..."
};
StatementStep StepOf(Statement statement) noexcept;

// The dead-letter claim statement of a claim statement, or Count when it has none.
Statement DeadLetterClaimOf(Statement claim);

// The claim of a queue with priorities for a claim statement (Read,
// ReadConditional, Pop), or the statement itself (FIFO group reads keep
// their order).
Statement PriorityClaimOf(Statement claim);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
