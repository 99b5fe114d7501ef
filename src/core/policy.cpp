// src/core/policy.cpp
// Delivery policy rules and the SQL of their rare statements (policy.hpp).
#include "pgmq/core/policy.hpp"

#include <algorithm>
#include <cmath>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

constexpr const char *kEq = " OPERATOR(pg_catalog.=) ";

// The columns of one policy, in the order of SetPolicySql's $3, $4.
struct PolicyColumns {
	const char *first;
	const char *second;  // nullptr: the policy has one column
};

PolicyColumns ColumnsOf(PolicyKind kind)
{
	switch (kind) {
	case PolicyKind::DeadLetter:
		return {"dead_letter_queue", "max_deliveries"};
	case PolicyKind::RetryBackoff:
		return {"retry_base_seconds", "retry_max_seconds"};
	case PolicyKind::Deduplication:
		return {"deduplication_window", nullptr};
	case PolicyKind::Retention:
		return {"retention_max_age", "retention_archive_max_age"};
	case PolicyKind::Priority:
		return {"priority_levels", nullptr};
	case PolicyKind::Pause:
		return {"paused_at", nullptr};
	}
	throw CoreError(ErrorKind::Internal, "unknown policy");
}

// A row none of whose delivery policies is set (it may still pause the queue).
constexpr const char *kNoDeliveryPolicy =
	"p.dead_letter_queue IS NULL AND p.max_deliveries IS NULL AND p.retry_base_seconds IS NULL AND "
	"p.deduplication_window IS NULL AND p.retention_max_age IS NULL AND p.retention_archive_max_age IS NULL AND "
	"p.priority_levels IS NULL";

// Rows of `table` picked oldest first by `order`, at most $limit, skipping
// rows other transactions hold.
std::string PickRows(const std::string &table, const std::string &where, const char *order, const char *limit)
{
	return " WHERE q.msg_id" + std::string(kEq) + "ANY (ARRAY(SELECT msg_id FROM " + table + where + " ORDER BY " +
	       order + " LIMIT " + limit + " FOR UPDATE SKIP LOCKED))";
}

}  // namespace

void CheckMaxDeliveries(int64_t max_deliveries)
{
	if (max_deliveries < 1)
		throw CoreError(ErrorKind::InvalidParameter, "max_deliveries must be at least 1");
}

void CheckBackoff(int64_t base_seconds, int64_t max_seconds)
{
	if (base_seconds < 0)
		throw CoreError(ErrorKind::InvalidParameter, "base_seconds must not be negative");
	if (max_seconds < base_seconds)
		throw CoreError(ErrorKind::InvalidParameter, "max_seconds must be at least base_seconds");
}

void CheckRedriveQuantity(int64_t qty)
{
	if (qty < 0)
		throw CoreError(ErrorKind::InvalidParameter, "qty must not be negative");
}

double BackoffSeconds(int64_t base_seconds, int64_t max_seconds, int64_t read_ct)
{
	const int64_t exponent = std::min<int64_t>(std::max<int64_t>(read_ct - 1, 0), 62);
	return std::min(static_cast<double>(base_seconds) * std::ldexp(1.0, static_cast<int>(exponent)),
	                static_cast<double>(max_seconds));
}

double BackoffJitter(double uniform01)
{
	const double u = std::clamp(uniform01, 0.0, 1.0);
	return 1.0 - 0.1 * u;
}

// A row counts for the queue table it was written for ($2): one left by a
// table that was dropped is never adopted by a new one of the same name.
std::string LoadPolicySql()
{
	return "SELECT p.queue_name::pg_catalog.text, p.dead_letter_queue::pg_catalog.text, p.max_deliveries, "
	       "p.retry_base_seconds, p.retry_max_seconds, p.deduplication_window, p.retention_max_age, "
	       "p.retention_archive_max_age, p.dead_letter_relid::pg_catalog.oid, p.paused_at IS NOT NULL, "
	       "p.priority_levels FROM pgmq.policies AS p WHERE "
	       "pg_catalog.lower(p.queue_name::pg_catalog.text COLLATE pg_catalog.\"C\") OPERATOR(pg_catalog.=) $1 AND "
	       "p.queue_relid OPERATOR(pg_catalog.=) $2 LIMIT 1";
}

std::string MetaQueueNameSql()
{
	return "SELECT m.queue_name::pg_catalog.text FROM pgmq.meta AS m WHERE pg_catalog.lower(m.queue_name::pg_catalog.text "
	       "COLLATE pg_catalog.\"C\") OPERATOR(pg_catalog.=) pg_catalog.lower($1 COLLATE pg_catalog.\"C\") LIMIT 1";
}

std::string SetPolicySql(PolicyKind kind)
{
	const PolicyColumns columns = ColumnsOf(kind);
	std::string names = std::string(columns.first);
	std::string values = "$3";
	std::string updates = names + " = EXCLUDED." + names;
	if (columns.second) {
		names += std::string(", ") + columns.second;
		values += ", $4";
		updates += std::string(", ") + columns.second + " = EXCLUDED." + columns.second;
	}
	// The dead-letter queue is pinned to its table too ($5).
	if (kind == PolicyKind::DeadLetter) {
		names += ", dead_letter_relid";
		values += ", $5";
		updates += ", dead_letter_relid = EXCLUDED.dead_letter_relid";
	}
	return "INSERT INTO pgmq.policies AS p (queue_name, queue_relid, " + names + ") VALUES ($1, $2, " + values +
	       ") ON CONFLICT (queue_name) DO UPDATE SET " + updates + ", updated_at = pg_catalog.now()";
}

std::string DeleteStalePolicySql()
{
	return "DELETE FROM pgmq.policies AS p WHERE pg_catalog.lower(p.queue_name::pg_catalog.text COLLATE "
	       "pg_catalog.\"C\") OPERATOR(pg_catalog.=) pg_catalog.lower($1 COLLATE pg_catalog.\"C\") AND "
	       "p.queue_relid OPERATOR(pg_catalog.<>) $2";
}

std::string ClearPolicySql(PolicyKind kind)
{
	const PolicyColumns columns = ColumnsOf(kind);
	std::string set = std::string(columns.first) + " = NULL";
	if (columns.second)
		set += std::string(", ") + columns.second + " = NULL";
	return "UPDATE pgmq.policies AS p SET " + set + ", updated_at = pg_catalog.now() WHERE p.queue_name" + kEq + "$1";
}

std::string DeleteEmptyPolicySql()
{
	return std::string("DELETE FROM pgmq.policies AS p WHERE p.queue_name") + kEq + "$1 AND " + kNoDeliveryPolicy +
	       " AND p.paused_at IS NULL";
}

std::string RetentionQueueBatchSql(std::string_view queue_table)
{
	const std::string q = QualifiedTable(queue_table);
	return "WITH gone AS (DELETE FROM " + q + " AS q" +
	       PickRows(q, " WHERE enqueued_at OPERATOR(pg_catalog.<) $1", "msg_id", "$2") +
	       " RETURNING 1) SELECT pg_catalog.count(*) FROM gone";
}

std::string RetentionArchiveBatchSql(std::string_view archive_table)
{
	const std::string a = QualifiedTable(archive_table);
	return "WITH gone AS (DELETE FROM " + a + " AS q" +
	       PickRows(a, " WHERE archived_at OPERATOR(pg_catalog.<) $1", "archived_at", "$2") +
	       " RETURNING 1) SELECT pg_catalog.count(*) FROM gone";
}

std::string ExpireDeduplicationBatchSql()
{
	return std::string("WITH gone AS (DELETE FROM pgmq.deduplication AS d USING (SELECT e.queue_name, e.deduplication_id ") +
	       "FROM pgmq.deduplication AS e WHERE e.queue_name" + kEq + "$1 AND e.expires_at OPERATOR(pg_catalog.<=) $2 " +
	       "LIMIT $3 FOR UPDATE SKIP LOCKED) AS e WHERE d.queue_name" + kEq + "e.queue_name AND d.deduplication_id" +
	       kEq + "e.deduplication_id RETURNING 1) SELECT pg_catalog.count(*) FROM gone";
}

std::string DeduplicatedResolveSql(std::string_view queue_table)
{
	return "WITH gone AS (DELETE FROM " + QualifiedTable(queue_table) + " AS q WHERE q.msg_id" + kEq +
	       "ANY ($1) RETURNING q.msg_id) SELECT COALESCE(d.msg_id, r.msg_id) FROM ROWS FROM (pg_catalog.unnest($2), " +
	       "pg_catalog.unnest($3)) WITH ORDINALITY AS r(msg_id, dedup_id, ord) LEFT JOIN pgmq.deduplication AS d ON " +
	       "d.queue_name" + kEq + "$4 AND d.deduplication_id" + kEq + "r.dedup_id AND d.queue_relid" + kEq +
	       "$5 ORDER BY r.ord";
}

std::string DeleteDeduplicationSql()
{
	return std::string("DELETE FROM pgmq.deduplication AS d WHERE d.queue_name") + kEq + "$1";
}

std::string ListPoliciesSql()
{
	return "SELECT p.queue_name::pg_catalog.text, p.dead_letter_queue::pg_catalog.text, p.max_deliveries, "
	       "p.retry_base_seconds, p.retry_max_seconds, p.deduplication_window, p.retention_max_age, "
	       "p.retention_archive_max_age, p.queue_relid::pg_catalog.oid, p.dead_letter_relid::pg_catalog.oid, "
	       "p.priority_levels FROM pgmq.policies AS p WHERE NOT (" + std::string(kNoDeliveryPolicy) + ") ORDER BY p.queue_name";
}

std::string DeadLetteredCountSql(std::string_view dead_letter_table)
{
	return "SELECT pg_catalog.count(*) FROM " + QualifiedTable(dead_letter_table) +
	       " AS q WHERE q.headers OPERATOR(pg_catalog.->) 'x-pgmq-dead-letter' OPERATOR(pg_catalog.->>) 'queue'" + kEq +
	       "$1";
}

std::string QueueStatesSql()
{
	return std::string("SELECT m.queue_name::pg_catalog.text, p.paused_at, p.priority_levels, ") +
	       "p.dead_letter_queue::pg_catalog.text, p.queue_relid::pg_catalog.oid, p.dead_letter_relid::pg_catalog.oid, " +
	       "ARRAY(SELECT s.queue_name::pg_catalog.text FROM pgmq.policies AS s WHERE s.dead_letter_queue" + kEq +
	       "m.queue_name ORDER BY 1) FROM pgmq.meta AS m LEFT JOIN pgmq.policies AS p ON p.queue_name" + kEq +
	       "m.queue_name ORDER BY m.queue_name";
}

std::string QueueStateSql()
{
	return std::string("SELECT COALESCE(p.queue_name::pg_catalog.text, $1), p.paused_at, p.priority_levels, ") +
	       "p.dead_letter_queue::pg_catalog.text, p.queue_relid::pg_catalog.oid, p.dead_letter_relid::pg_catalog.oid, " +
	       "ARRAY(SELECT s.queue_name::pg_catalog.text FROM pgmq.policies AS s WHERE s.dead_letter_relid::pg_catalog.oid" +
	       kEq + "$2 AND s.dead_letter_queue IS NOT NULL ORDER BY 1) FROM (SELECT) AS one LEFT JOIN pgmq.policies AS p " +
	       "ON p.queue_relid::pg_catalog.oid" + kEq + "$2";
}

std::string RetentionQueuesSql()
{
	return "SELECT p.queue_name::pg_catalog.text FROM pgmq.policies AS p WHERE p.retention_max_age IS NOT NULL OR "
	       "p.retention_archive_max_age IS NOT NULL OR p.deduplication_window IS NOT NULL ORDER BY p.queue_name";
}

}  // namespace pgmq::core
