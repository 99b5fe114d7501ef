// src/core/statements.cpp
// SQL text of the cached per-message statements (see statements.hpp).
// Returned message columns are always named, in message_record's order,
// because upgraded upstream tables have a different physical column order.
#include "pgmq/core/statements.hpp"

#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/error.hpp"
#include "pgmq/core/fifo.hpp"
#include "pgmq/core/notify.hpp"
#include "pgmq/core/priority.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/topic.hpp"

namespace pgmq::core {

namespace {

using P = ParamType;

// One row per statement, labelled with it; the rows are in the enum's order
// (checked below), so ShapeOf indexes them.
struct ShapeRow {
	Statement statement;
	StatementShape shape;
};

// Every dead-letter claim: ($1 now, $2 new vt, $3 qty, $4 max deliveries, $5
// source queue name), and for the conditional read ($6 condition); the
// read's generic plan, for its LIMIT.
constexpr StatementShape kDeadLetterShape = {
	6, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8, P::Text, P::Int8}, true};
// The grouped ones are planned as their plain statements are (no forced generic plan).
constexpr StatementShape kGroupedDeadLetterShape = {5, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8, P::Text}};
constexpr StatementShape kConditionalDeadLetterShape = {
	7, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8, P::Text, P::Jsonb, P::Int8}, true};

constexpr ShapeRow kShapes[] = {
	{Statement::Send, {3, {P::Jsonb, P::Jsonb, P::Timestamptz}}},
	{Statement::SendBatch, {3, {P::JsonbArray, P::JsonbArray, P::Timestamptz}}},
	{Statement::Read, {4, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8}, true}},
	{Statement::ReadConditional, {5, {P::Timestamptz, P::Timestamptz, P::Int8, P::Jsonb, P::Int8}, true}},
	{Statement::Pop, {3, {P::Timestamptz, P::Int8, P::Int8}, true}},
	{Statement::SetVt, {2, {P::Int8, P::Timestamptz}}},
	{Statement::SetVtBatch, {2, {P::Int8Array, P::Timestamptz}}},
	{Statement::Delete, {1, {P::Int8}}},
	{Statement::DeleteBatch, {1, {P::Int8Array}}},
	{Statement::Archive, {1, {P::Int8}}},
	{Statement::ArchiveBatch, {1, {P::Int8Array}}},
	{Statement::Metrics, {2, {P::Text, P::Regclass}}},
	{Statement::ReadGrouped, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::ReadGroupedIndexed, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::ReadGroupedRr, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::ReadGroupedRrIndexed, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::ReadGroupedHead, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::ReadGroupedHeadIndexed, {3, {P::Timestamptz, P::Timestamptz, P::Int8}}},
	{Statement::LiveHead, {1, {P::Int8}}},
	{Statement::RecentSend, {2, {P::Int8, P::Regclass}}},
	// Generic plans: a custom plan is no better for any id.
	{Statement::SendDeduplicated,
	 {7, {P::Jsonb, P::Jsonb, P::Timestamptz, P::Text, P::Timestamptz, P::Timestamptz, P::Regclass}, true}},
	{Statement::SendBatchDeduplicated,
	 {7, {P::JsonbArray, P::JsonbArray, P::Timestamptz, P::Text, P::Timestamptz, P::Timestamptz, P::Regclass}, true}},
	{Statement::Retry, {6, {P::Int8, P::Timestamptz, P::Int8, P::Int8, P::Float8, P::Text}}},
	{Statement::Peek, {2, {P::Int8, P::Int8}, true}},
	{Statement::QueueState, {1, {P::Timestamptz}}},
	{Statement::ReadPriority, {4, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8}, true}},
	{Statement::ReadConditionalPriority, {5, {P::Timestamptz, P::Timestamptz, P::Int8, P::Jsonb, P::Int8}, true}},
	{Statement::PopPriority, {3, {P::Timestamptz, P::Int8, P::Int8}, true}},
	{Statement::ReadDeadLetter, kDeadLetterShape},
	{Statement::ReadConditionalDeadLetter, kConditionalDeadLetterShape},
	{Statement::ReadGroupedDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadGroupedIndexedDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadGroupedRrDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadGroupedRrIndexedDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadGroupedHeadDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadGroupedHeadIndexedDeadLetter, kGroupedDeadLetterShape},
	{Statement::ReadPriorityDeadLetter, kDeadLetterShape},
	{Statement::ReadConditionalPriorityDeadLetter, kConditionalDeadLetterShape},
	{Statement::NotifyThrottle, {2, {P::Text, P::Timestamptz}}},
	{Statement::SendTopic, {4, {P::Text, P::Jsonb, P::Jsonb, P::Timestamptz}}},
	{Statement::SendBatchTopic, {4, {P::Text, P::JsonbArray, P::JsonbArray, P::Timestamptz}}},
	{Statement::NotifyState, {1, {P::Text}}},
};
static_assert(sizeof kShapes / sizeof kShapes[0] == static_cast<int>(Statement::Count),
	"one shape per statement");

constexpr bool RowsInEnumOrder()
{
	for (int i = 0; i < static_cast<int>(Statement::Count); i++)
		if (static_cast<int>(kShapes[i].statement) != i)
			return false;
	return true;
}
static_assert(RowsInEnumOrder(), "kShapes rows must be in the order of enum Statement");

constexpr const char *kMessageColumns = "q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers";
constexpr const char *kEq = " OPERATOR(pg_catalog.=) ";
// The order a claim picks and returns messages in: oldest first, or (a
// queue with priorities) highest priority first, then oldest.
std::string ClaimOrder(bool priority)
{
	return priority ? PriorityExpression("headers") + " DESC, msg_id" : "msg_id";
}

// Claimed messages come back in the claim's order: the scan that claims them
// may produce them in any order.
std::string InClaimOrder(bool priority) { return " SELECT * FROM claimed ORDER BY " + ClaimOrder(priority); }

// The ids of the oldest visible messages at or after the queue's head (no
// live message has a lower id: head_hint.hpp), skipping rows other
// transactions hold. The head bound lets the msg_id index scan start where
// the live rows do, instead of stepping over every deleted row a held
// snapshot keeps. As an array sub-select it is planned once and claims its
// rows by primary key, whatever the LIMIT.
std::string PickVisible(const std::string &q, const char *qty_param, const char *head_param, const char *extra_filter,
                        bool priority = false)
{
	return std::string(" WHERE q.msg_id") + kEq + "ANY (ARRAY(SELECT msg_id FROM " + q +
	       " WHERE msg_id OPERATOR(pg_catalog.>=) " + head_param + " AND vt OPERATOR(pg_catalog.<=) $1" +
	       extra_filter + " ORDER BY " + ClaimOrder(priority) + " LIMIT " + qty_param + " FOR UPDATE SKIP LOCKED))";
}

std::string ReadSql(const std::string &q, const char *head_param, const char *extra_filter, bool priority = false)
{
	return "WITH claimed AS (UPDATE " + q +
	       " AS q SET vt = $2, read_ct = q.read_ct OPERATOR(pg_catalog.+) 1, last_read_at = $1" +
	       PickVisible(q, "$3", head_param, extra_filter, priority) + " RETURNING " + kMessageColumns + ")" +
	       InClaimOrder(priority);
}

std::string PopSql(const std::string &q, bool priority)
{
	return "WITH claimed AS (DELETE FROM " + q + " AS q" + PickVisible(q, "$2", "$3", "", priority) + " RETURNING " +
	       kMessageColumns + ")" + InClaimOrder(priority);
}

std::string ArchiveSql(const std::string &q, const std::string &a, const char *match)
{
	const char *columns = "msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers";
	return std::string("WITH moved AS (DELETE FROM ") + q + " WHERE msg_id" + match + " RETURNING " + columns +
	       ") INSERT INTO " + a + " (" + columns + ") SELECT " + columns + " FROM moved RETURNING msg_id";
}

// The sequence is $2, the OID the adapter found through the catalog: a
// relation named q_<name>_msg_id_seq may be a tenant's view.
std::string MetricsSql(const std::string &q)
{
	// EXTRACT is grammar, resolved to pg_catalog.extract whatever the search_path.
	const char *age = "EXTRACT(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) ";
	return std::string("SELECT $1, pg_catalog.count(*), ") + age + "pg_catalog.max(q.enqueued_at))::pg_catalog.int4, " +
	       age + "pg_catalog.min(q.enqueued_at))::pg_catalog.int4, " +
	       "COALESCE(pg_catalog.pg_sequence_last_value($2), 0), pg_catalog.now(), " +
	       "pg_catalog.count(*) FILTER (WHERE q.vt OPERATOR(pg_catalog.<=) pg_catalog.now()), " +
	       // default_partition_length: the adapter's, from the catalog's default
	       // partition of each table (default_partition.hpp), not from here.
	       "NULL::pg_catalog.int8 FROM " + q + " AS q";
}

// The message nearest after the start of the last $1 ids (else the newest
// before it), through the msg_id index: the first branch's row ends the
// scan, so the second runs only when the window holds no message.
std::string RecentSendSql(const std::string &q)
{
	const std::string window_start = "GREATEST(s.last_id OPERATOR(pg_catalog.-) $1, 0)";
	return "SELECT s.last_id, r.msg_id, EXTRACT(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) "
	       "r.enqueued_at)::pg_catalog.float8 "
	       "FROM (SELECT COALESCE(pg_catalog.pg_sequence_last_value($2), 0) AS last_id) s "
	       "LEFT JOIN LATERAL ((SELECT q.msg_id, q.enqueued_at FROM " + q +
	       " AS q WHERE q.msg_id OPERATOR(pg_catalog.>=) " + window_start + " ORDER BY q.msg_id LIMIT 1) UNION ALL "
	       "(SELECT q.msg_id, q.enqueued_at FROM " + q + " AS q WHERE q.msg_id OPERATOR(pg_catalog.<) " + window_start +
	       " ORDER BY q.msg_id DESC LIMIT 1) LIMIT 1) r ON true";
}

// A send with a deduplication id, in one statement: `pre` finds the id's
// row if it has not expired (committed, or this transaction's own); then
// nothing is inserted and its msg_id is the result. Otherwise the message
// is inserted and the id's row with it (an expired row is taken over).
// When another transaction inserted the id's row after this statement's
// snapshot (two senders racing), the unique key makes this insert wait for
// that transaction: if it commits, the row is not this send's and `raced`
// is true, and the adapter deletes the message again and returns the first
// send's msg_id (core::DeduplicatedResolveSql); if it rolls back, the row is
// this send's.
// Found by the primary key: the expiry is tested as `(...) IS TRUE`, which
// no index can serve, so the planner never prefers the expiry index (and a
// scan of every live id of the queue) on a table it has no statistics for.
std::string DeduplicationPre(const std::string &ids)
{
	return "pre AS (SELECT d.deduplication_id, d.msg_id FROM pgmq.deduplication AS d WHERE d.queue_name" +
	       std::string(kEq) + "$4 AND d.deduplication_id" + kEq + ids + " AND d.queue_relid" + kEq +
	       "$7 AND (d.expires_at OPERATOR(pg_catalog.>) $5) IS TRUE)";
}

std::string DeduplicationUpsert(const std::string &rows)
{
	// A row another table of this name left (its queue_relid differs) is
	// replaced as an expired one is.
	return "d AS (INSERT INTO pgmq.deduplication AS d (queue_name, deduplication_id, msg_id, expires_at, queue_relid) " +
	       rows +
	       " ON CONFLICT (queue_name, deduplication_id) DO UPDATE SET msg_id = EXCLUDED.msg_id, "
	       "expires_at = EXCLUDED.expires_at, queue_relid = EXCLUDED.queue_relid WHERE d.expires_at "
	       "OPERATOR(pg_catalog.<=) $5 OR d.queue_relid OPERATOR(pg_catalog.<>) EXCLUDED.queue_relid RETURNING "
	       "d.deduplication_id)";
}

constexpr const char *kDeduplicationId = " OPERATOR(pg_catalog.->>) 'x-pgmq-deduplication-id'";

std::string SendDeduplicatedSql(const std::string &q)
{
	return "WITH " + DeduplicationPre(std::string("($2") + kDeduplicationId + ")") + ", m AS (INSERT INTO " + q +
	       " AS q (vt, message, headers) SELECT $3, $1, $2 WHERE NOT EXISTS (SELECT FROM pre) RETURNING q.msg_id), " +
	       DeduplicationUpsert(std::string("SELECT $4, $2") + kDeduplicationId + ", m.msg_id, $6, $7 FROM m") +
	       " SELECT COALESCE((SELECT pre.msg_id FROM pre), (SELECT m.msg_id FROM m)), EXISTS (SELECT FROM m) AND NOT " +
	       "EXISTS (SELECT FROM d), $2" + kDeduplicationId;
}

// Within one batch an id's later elements collapse to its first: only the
// elements without an id and the first of each id not found in `pre` are
// inserted. msg_ids are drawn in the order of the elements, so the n-th
// inserted id belongs to the n-th of those.
std::string SendBatchDeduplicatedSql(const std::string &q)
{
	return std::string("WITH input AS (SELECT i.message, i.headers, i.ord, i.dedup_id, CASE WHEN i.dedup_id IS NULL ") +
	       "THEN i.ord ELSE pg_catalog.min(i.ord) OVER (PARTITION BY i.dedup_id) END AS first_ord FROM (SELECT " +
	       "m.message, m.headers, m.ord, m.headers" + kDeduplicationId + " AS dedup_id FROM ROWS FROM " +
	       "(pg_catalog.unnest($1), pg_catalog.unnest($2)) WITH ORDINALITY AS m(message, headers, ord)) AS i), " +
	       DeduplicationPre("ANY (ARRAY(SELECT input.dedup_id FROM input WHERE input.dedup_id IS NOT NULL))") +
	       ", sendable AS (SELECT i.ord, i.message, i.headers, i.dedup_id, pg_catalog.row_number() OVER (ORDER BY " +
	       "i.ord) AS rn FROM input AS i LEFT JOIN pre ON pre.deduplication_id OPERATOR(pg_catalog.=) i.dedup_id WHERE " +
	       "i.ord OPERATOR(pg_catalog.=) i.first_ord AND pre.deduplication_id IS NULL), " +
	       "inserted AS (INSERT INTO " + q + " AS q (vt, message, headers) SELECT $3, s.message, s.headers FROM sendable " +
	       "AS s ORDER BY s.ord RETURNING q.msg_id), " +
	       "mapped AS (SELECT s.ord, s.dedup_id, n.msg_id FROM sendable AS s JOIN (SELECT inserted.msg_id, " +
	       "pg_catalog.row_number() OVER (ORDER BY inserted.msg_id) AS rn FROM inserted) AS n ON n.rn " +
	       "OPERATOR(pg_catalog.=) s.rn), " +
	       DeduplicationUpsert("SELECT $4, p.dedup_id, p.msg_id, $6, $7 FROM mapped AS p WHERE p.dedup_id IS NOT NULL") +
	       " SELECT COALESCE(pre.msg_id, p.msg_id), p.dedup_id IS NOT NULL AND d.deduplication_id IS NULL, i.dedup_id " +
	       "FROM input AS i LEFT JOIN mapped AS p ON p.ord OPERATOR(pg_catalog.=) i.first_ord LEFT JOIN pre ON " +
	       "pre.deduplication_id OPERATOR(pg_catalog.=) i.dedup_id LEFT JOIN d ON d.deduplication_id " +
	       "OPERATOR(pg_catalog.=) p.dedup_id ORDER BY i.ord";
}

// vt = now + min(base * 2^(read_ct - 1), max) * jitter (core::BackoffSeconds);
// a reason ($6) joins the message's failure history.
std::string RetrySql(const std::string &q)
{
	return "UPDATE " + q + " AS q SET vt = $2 OPERATOR(pg_catalog.+) pg_catalog.make_interval(0, 0, 0, 0, 0, 0, " +
	       "pg_catalog.float8mul(LEAST(pg_catalog.float8mul($3::pg_catalog.float8, pg_catalog.power(2::pg_catalog.float8, " +
	       "LEAST(GREATEST(q.read_ct OPERATOR(pg_catalog.-) 1, 0), 62)::pg_catalog.float8)), $4::pg_catalog.float8), $5)), " +
	       "headers = " + FailureAppendedSql("q.headers", "$6::pg_catalog.text", "$2::pg_catalog.timestamptz", "q.read_ct") +
	       " WHERE q.msg_id" + kEq + "$1 RETURNING " + kMessageColumns;
}

// Visible, leased (read, its visibility timeout running) and delayed (never
// read, not yet visible) messages at $1.
std::string QueueStateSql(const std::string &q)
{
	const char *later = "q.vt OPERATOR(pg_catalog.>) $1";
	return std::string("SELECT pg_catalog.count(*) FILTER (WHERE q.vt OPERATOR(pg_catalog.<=) $1), ") +
	       "pg_catalog.count(*) FILTER (WHERE " + later + " AND q.read_ct OPERATOR(pg_catalog.>) 0), " +
	       "pg_catalog.count(*) FILTER (WHERE " + later + " AND q.read_ct OPERATOR(pg_catalog.<=) 0) FROM " + q + " AS q";
}

}  // namespace

std::string DeadLetterMoveSql(const std::string &q, std::string_view dead_letter_table, const std::string &picked)
{
	// The row's own read_ct decides (the locked, newest version): a row is
	// either deleted here or claimed by the statement's UPDATE, never both.
	return "moved AS (DELETE FROM " + q + " AS q USING " + picked + " AS p WHERE q.msg_id" + kEq + "p.msg_id AND " +
	       "q.read_ct OPERATOR(pg_catalog.>=) $4 RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.message, q.headers), " +
	       "dead AS (INSERT INTO " + QualifiedTable(dead_letter_table) + " (vt, message, headers) SELECT $1, m.message, " +
	       DeadLetterHeadersSql("$5::pg_catalog.text", "$1::pg_catalog.timestamptz",
	                            std::string("'") + kDeliveryLimitReason + "'::pg_catalog.text") +
	       " FROM moved AS m)";
}

const StatementShape &ShapeOf(Statement statement)
{
	const auto index = static_cast<int>(statement);
	if (index < 0 || index >= static_cast<int>(Statement::Count))
		throw CoreError(ErrorKind::Internal, "unknown statement");
	return kShapes[index].shape;
}

std::string StatementSql(Statement statement, std::string_view queue_table, std::string_view archive_table)
{
	const std::string q = QualifiedTable(queue_table);
	const std::string returning = std::string(" RETURNING ") + kMessageColumns;
	switch (statement) {
	case Statement::Send:
		return "INSERT INTO " + q + " AS q (vt, message, headers) VALUES ($3, $1, $2) RETURNING q.msg_id";
	case Statement::SendBatch:
		// ROWS FROM pads the shorter array with NULLs: a NULL headers array gives NULL headers.
		return "INSERT INTO " + q + " AS q (vt, message, headers) SELECT $3, m.message, m.headers " +
		       "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS m(message, headers) RETURNING q.msg_id";
	case Statement::Read:
	case Statement::ReadPriority:
		return ReadSql(q, "$4", "", statement == Statement::ReadPriority);
	case Statement::ReadConditional:
	case Statement::ReadConditionalPriority:
		return ReadSql(q, "$5", " AND message OPERATOR(pg_catalog.@>) $4", statement == Statement::ReadConditionalPriority);
	case Statement::Pop:
	case Statement::PopPriority:
		return PopSql(q, statement == Statement::PopPriority);
	case Statement::SetVt:
		return "UPDATE " + q + " AS q SET vt = $2 WHERE q.msg_id" + kEq + "$1" + returning;
	case Statement::SetVtBatch:
		return "UPDATE " + q + " AS q SET vt = $2 WHERE q.msg_id" + kEq + "ANY ($1)" + returning;
	case Statement::Delete:
		return "DELETE FROM " + q + " AS q WHERE q.msg_id" + kEq + "$1 RETURNING q.msg_id";
	case Statement::DeleteBatch:
		return "DELETE FROM " + q + " AS q WHERE q.msg_id" + kEq + "ANY ($1) RETURNING q.msg_id";
	case Statement::Archive:
		return ArchiveSql(q, QualifiedTable(archive_table), " OPERATOR(pg_catalog.=) $1");
	case Statement::ArchiveBatch:
		return ArchiveSql(q, QualifiedTable(archive_table), " OPERATOR(pg_catalog.=) ANY ($1)");
	case Statement::Metrics:
		return MetricsSql(q);
	case Statement::ReadGrouped:
	case Statement::ReadGroupedIndexed:
		return GroupReadSql(GroupRead::Batch, statement == Statement::ReadGroupedIndexed, queue_table);
	case Statement::ReadGroupedRr:
	case Statement::ReadGroupedRrIndexed:
		return GroupReadSql(GroupRead::RoundRobin, statement == Statement::ReadGroupedRrIndexed, queue_table);
	case Statement::ReadGroupedHead:
	case Statement::ReadGroupedHeadIndexed:
		return GroupReadSql(GroupRead::Head, statement == Statement::ReadGroupedHeadIndexed, queue_table);
	case Statement::NotifyThrottle:
		return NotifyThrottleSql();
	case Statement::SendTopic:
		return SendTopicSql();
	case Statement::SendBatchTopic:
		return SendBatchTopicSql();
	case Statement::NotifyState:
		return NotifyStateSql();
	case Statement::LiveHead:
		// min() over the msg_id index: one step from $1 past the deleted rows.
		return "SELECT pg_catalog.min(q.msg_id), EXISTS (SELECT FROM pg_catalog.pg_prepared_xacts) FROM " + q +
		       " AS q WHERE q.msg_id OPERATOR(pg_catalog.>=) $1";
	case Statement::RecentSend:
		return RecentSendSql(q);
	case Statement::SendDeduplicated:
		return SendDeduplicatedSql(q);
	case Statement::SendBatchDeduplicated:
		return SendBatchDeduplicatedSql(q);
	case Statement::Retry:
		return RetrySql(q);
	case Statement::Peek:
		return std::string("SELECT ") + kMessageColumns + " FROM " + q + " AS q WHERE q.msg_id OPERATOR(pg_catalog.>) $1" +
		       " ORDER BY q.msg_id LIMIT $2";
	case Statement::QueueState:
		return QueueStateSql(q);
	case Statement::ReadDeadLetter:
	case Statement::ReadConditionalDeadLetter:
	case Statement::ReadGroupedDeadLetter:
	case Statement::ReadGroupedIndexedDeadLetter:
	case Statement::ReadGroupedRrDeadLetter:
	case Statement::ReadGroupedRrIndexedDeadLetter:
	case Statement::ReadGroupedHeadDeadLetter:
	case Statement::ReadGroupedHeadIndexedDeadLetter:
	case Statement::ReadPriorityDeadLetter:
	case Statement::ReadConditionalPriorityDeadLetter:
		throw CoreError(ErrorKind::Internal, "a dead-letter claim needs its dead-letter queue (DeadLetterSql)");
	case Statement::Count:
		break;
	}
	throw CoreError(ErrorKind::Internal, "unknown statement");
}

StatementStep StepOf(Statement statement) noexcept
{
	if (IsDeadLetterClaim(statement))
		return {"reading", ", moving the messages at its delivery limit to its dead-letter queue"};
	switch (statement) {
	case Statement::Send:
	case Statement::SendBatch:
	case Statement::SendDeduplicated:
	case Statement::SendBatchDeduplicated:
		return {"sending to", ""};
	case Statement::Pop:
	case Statement::PopPriority:
		return {"popping from", ""};
	case Statement::SetVt:
	case Statement::SetVtBatch:
		return {"setting visibility timeouts in", ""};
	case Statement::Delete:
	case Statement::DeleteBatch:
		return {"deleting from", ""};
	case Statement::Archive:
	case Statement::ArchiveBatch:
		return {"archiving from", ""};
	case Statement::Metrics:
	case Statement::QueueState:
		return {"counting the messages of", ""};
	case Statement::LiveHead:
		return {"finding the head of", ""};
	case Statement::RecentSend:
		return {"sampling the sends of", ""};
	case Statement::Retry:
		return {"scheduling a retry in", ""};
	case Statement::Peek:
		return {"peeking at", ""};
	case Statement::NotifyThrottle:
	case Statement::NotifyState:
		return {"notifying listeners", ""};
	case Statement::SendTopic:
	case Statement::SendBatchTopic:
		return {"sending to a topic", ""};
	default:
		return {"reading", ""};
	}
}

Statement DeadLetterClaimOf(Statement claim)
{
	switch (claim) {
	case Statement::Read:
		return Statement::ReadDeadLetter;
	case Statement::ReadConditional:
		return Statement::ReadConditionalDeadLetter;
	case Statement::ReadGrouped:
		return Statement::ReadGroupedDeadLetter;
	case Statement::ReadGroupedIndexed:
		return Statement::ReadGroupedIndexedDeadLetter;
	case Statement::ReadGroupedRr:
		return Statement::ReadGroupedRrDeadLetter;
	case Statement::ReadGroupedRrIndexed:
		return Statement::ReadGroupedRrIndexedDeadLetter;
	case Statement::ReadGroupedHead:
		return Statement::ReadGroupedHeadDeadLetter;
	case Statement::ReadGroupedHeadIndexed:
		return Statement::ReadGroupedHeadIndexedDeadLetter;
	case Statement::ReadPriority:
		return Statement::ReadPriorityDeadLetter;
	case Statement::ReadConditionalPriority:
		return Statement::ReadConditionalPriorityDeadLetter;
	default:
		return Statement::Count;
	}
}

Statement PriorityClaimOf(Statement claim)
{
	switch (claim) {
	case Statement::Read:
		return Statement::ReadPriority;
	case Statement::ReadConditional:
		return Statement::ReadConditionalPriority;
	case Statement::Pop:
		return Statement::PopPriority;
	default:
		return claim;
	}
}

std::string DeadLetterSql(Statement claim, std::string_view queue_table, std::string_view dead_letter_table)
{
	const std::string q = QualifiedTable(queue_table);
	switch (claim) {
	case Statement::ReadDeadLetter:
	case Statement::ReadConditionalDeadLetter:
	case Statement::ReadPriorityDeadLetter:
	case Statement::ReadConditionalPriorityDeadLetter: {
		const bool conditional =
			claim == Statement::ReadConditionalDeadLetter || claim == Statement::ReadConditionalPriorityDeadLetter;
		const bool priority =
			claim == Statement::ReadPriorityDeadLetter || claim == Statement::ReadConditionalPriorityDeadLetter;
		const char *filter = conditional ? " AND message OPERATOR(pg_catalog.@>) $6" : "";
		// The plain read's pick (PickVisible), once (a CTE used twice is
		// materialized), then the move and the claim.
		return "WITH picked AS (SELECT q.msg_id FROM " + q + " AS q" +
		       PickVisible(q, "$3", conditional ? "$7" : "$6", filter, priority) + "), " +
		       DeadLetterMoveSql(q, dead_letter_table, "picked") + ", claimed AS (UPDATE " + q +
		       " AS q SET vt = $2, read_ct = q.read_ct OPERATOR(pg_catalog.+) 1, last_read_at = $1 FROM picked AS p " +
		       "WHERE q.msg_id" + kEq + "p.msg_id AND q.read_ct OPERATOR(pg_catalog.<) $4 RETURNING " + kMessageColumns +
		       ")" + InClaimOrder(priority);
	}
	case Statement::ReadGroupedDeadLetter:
	case Statement::ReadGroupedIndexedDeadLetter:
		return GroupReadSql(GroupRead::Batch, claim == Statement::ReadGroupedIndexedDeadLetter, queue_table,
		                    dead_letter_table);
	case Statement::ReadGroupedRrDeadLetter:
	case Statement::ReadGroupedRrIndexedDeadLetter:
		return GroupReadSql(GroupRead::RoundRobin, claim == Statement::ReadGroupedRrIndexedDeadLetter, queue_table,
		                    dead_letter_table);
	case Statement::ReadGroupedHeadDeadLetter:
	case Statement::ReadGroupedHeadIndexedDeadLetter:
		return GroupReadSql(GroupRead::Head, claim == Statement::ReadGroupedHeadIndexedDeadLetter, queue_table,
		                    dead_letter_table);
	default:
		throw CoreError(ErrorKind::Internal, "not a dead-letter claim");
	}
}

}  // namespace pgmq::core
