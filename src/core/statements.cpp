// src/core/statements.cpp
// SQL text of the cached per-message statements (see statements.hpp).
// Returned message columns are always named, in message_record's order,
// because upgraded upstream tables have a different physical column order.
#include "pgmq/core/statements.hpp"

#include "pgmq/core/error.hpp"
#include "pgmq/core/fifo.hpp"
#include "pgmq/core/notify.hpp"
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
// Claimed messages come back oldest first: the scan that claims them may
// produce them in any order.
constexpr const char *kOldestFirst = " SELECT * FROM claimed ORDER BY msg_id";

// The ids of the oldest visible messages at or after the queue's head (no
// live message has a lower id: head_hint.hpp), skipping rows other
// transactions hold. The head bound lets the msg_id index scan start where
// the live rows do, instead of stepping over every deleted row a held
// snapshot keeps. As an array sub-select it is planned once and claims its
// rows by primary key, whatever the LIMIT.
std::string PickVisible(const std::string &q, const char *qty_param, const char *head_param, const char *extra_filter)
{
	return std::string(" WHERE q.msg_id") + kEq + "ANY (ARRAY(SELECT msg_id FROM " + q +
	       " WHERE msg_id OPERATOR(pg_catalog.>=) " + head_param + " AND vt OPERATOR(pg_catalog.<=) $1" +
	       extra_filter + " ORDER BY msg_id LIMIT " + qty_param + " FOR UPDATE SKIP LOCKED))";
}

std::string ReadSql(const std::string &q, const char *head_param, const char *extra_filter)
{
	return "WITH claimed AS (UPDATE " + q +
	       " AS q SET vt = $2, read_ct = q.read_ct OPERATOR(pg_catalog.+) 1, last_read_at = $1" +
	       PickVisible(q, "$3", head_param, extra_filter) + " RETURNING " + kMessageColumns + ")" + kOldestFirst;
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

}  // namespace

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
		return ReadSql(q, "$4", "");
	case Statement::ReadConditional:
		return ReadSql(q, "$5", " AND message OPERATOR(pg_catalog.@>) $4");
	case Statement::Pop:
		return "WITH claimed AS (DELETE FROM " + q + " AS q" + PickVisible(q, "$2", "$3", "") + returning + ")" + kOldestFirst;
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
	case Statement::Count:
		break;
	}
	throw CoreError(ErrorKind::Internal, "unknown statement");
}

}  // namespace pgmq::core
