// src/core/dead_letters.cpp
// Dead-letter headers, failure history and redrive (dead_letters.hpp).
#include "pgmq/core/dead_letters.hpp"

#include "pgmq/core/policy.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

constexpr const char *kEq = " OPERATOR(pg_catalog.=) ";

// The x-pgmq-dead-letter object of row alias `alias`'s headers, and its
// `field` as text.
std::string DeadLetterField(const std::string &alias, const char *field)
{
	return alias + ".headers OPERATOR(pg_catalog.->) '" + kDeadLetterHeader + "' OPERATOR(pg_catalog.->>) '" + field + "'";
}

// A dead letter's original msg_id, when it is a number (any sender to a
// dead-letter queue may write that header: a bad value sorts last, never fails).
std::string OriginalIdSql(const std::string &alias)
{
	const std::string id = alias + ".headers OPERATOR(pg_catalog.->) '" + kDeadLetterHeader + "' OPERATOR(pg_catalog.->) 'msg_id'";
	return "CASE WHEN pg_catalog.jsonb_typeof(" + id + ")" + kEq + "'number' THEN (" +
	       DeadLetterField(alias, "msg_id") + ")::pg_catalog.numeric END";
}

}  // namespace

std::string FailureAppendedSql(const std::string &headers, const std::string &reason, const std::string &at,
                               const std::string &read_ct)
{
	const std::string history = headers + " OPERATOR(pg_catalog.->) '" + kFailuresHeader + "'";
	const std::string entry = "pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('reason', pg_catalog.substr(" +
	                          reason + ", 1, " + std::to_string(kMaxReasonLength) + "), 'at', " + at + ", 'read_ct', " +
	                          read_ct + "))";
	const std::string appended = "CASE WHEN pg_catalog.jsonb_typeof(" + history + ")" + kEq + "'array' THEN " + history +
	                             " ELSE '[]'::pg_catalog.jsonb END OPERATOR(pg_catalog.||) " + entry;
	// The newest kMaxFailures, kept oldest first.
	const std::string kept = "(SELECT pg_catalog.jsonb_agg(f.value ORDER BY f.ord) FROM (SELECT e.value, e.ord FROM "
	                         "pg_catalog.jsonb_array_elements(" + appended + ") WITH ORDINALITY AS e(value, ord) "
	                         "ORDER BY e.ord DESC LIMIT " + std::to_string(kMaxFailures) + ") AS f)";
	return "CASE WHEN " + reason + " IS NULL OR pg_catalog.jsonb_typeof(" + headers + ") OPERATOR(pg_catalog.<>) 'object' THEN " +
	       headers + " ELSE COALESCE(" + headers + ", '{}'::pg_catalog.jsonb) OPERATOR(pg_catalog.||) " +
	       "pg_catalog.jsonb_build_object('" + kFailuresHeader + "', " + kept + ") END";
}

std::string DeadLetterHeadersSql(const std::string &queue, const std::string &moved_at, const std::string &reason)
{
	const std::string is_object = "pg_catalog.jsonb_typeof(m.headers)" + std::string(kEq) + "'object'";
	return "CASE WHEN " + is_object + " THEN m.headers ELSE '{}'::pg_catalog.jsonb END OPERATOR(pg_catalog.||) " +
	       "pg_catalog.jsonb_build_object('" + kDeadLetterHeader + "', pg_catalog.jsonb_strip_nulls(" +
	       "pg_catalog.jsonb_build_object('queue', " + queue + ", 'msg_id', m.msg_id, 'read_ct', m.read_ct, " +
	       "'enqueued_at', m.enqueued_at, 'moved_at', " + moved_at + ", 'reason', pg_catalog.substr(" + reason + ", 1, " +
	       std::to_string(kMaxReasonLength) + "), 'headers', CASE WHEN " + is_object + " THEN NULL ELSE m.headers END)))";
}

std::string DeadLetterNowSql(std::string_view queue_table, std::string_view dead_letter_table)
{
	return "WITH moved AS (DELETE FROM " + QualifiedTable(queue_table) + " AS q WHERE q.msg_id" + kEq + "ANY ($1) " +
	       "RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.message, " +
	       FailureAppendedSql("q.headers", "$4::pg_catalog.text", "$2::pg_catalog.timestamptz", "q.read_ct") +
	       " AS headers), dead AS (INSERT INTO " + QualifiedTable(dead_letter_table) + " (vt, message, headers) " +
	       "SELECT $2, m.message, " +
	       DeadLetterHeadersSql("$3::pg_catalog.text", "$2::pg_catalog.timestamptz", "$4::pg_catalog.text") +
	       " FROM moved AS m ORDER BY m.msg_id) SELECT m.msg_id FROM moved AS m ORDER BY m.msg_id";
}

std::string RedriveSql(std::string_view dead_letter_table, std::string_view queue_table)
{
	const std::string from = QualifiedTable(dead_letter_table);
	// Restores the headers the message had before it was dead-lettered.
	const std::string headers =
		"CASE WHEN pg_catalog.jsonb_typeof(m.headers) OPERATOR(pg_catalog.<>) 'object' THEN m.headers "
		"WHEN m.headers OPERATOR(pg_catalog.->) '" + std::string(kDeadLetterHeader) + "' OPERATOR(pg_catalog.?) 'headers' THEN "
		"m.headers OPERATOR(pg_catalog.->) '" + kDeadLetterHeader + "' OPERATOR(pg_catalog.->) 'headers' ELSE "
		"NULLIF(m.headers OPERATOR(pg_catalog.-) '" + kDeadLetterHeader + "'::pg_catalog.text, '{}'::pg_catalog.jsonb) END";
	return "WITH moved AS (DELETE FROM " + from + " AS q WHERE q.msg_id" + kEq + "ANY (ARRAY(SELECT d.msg_id FROM " +
	       from + " AS d WHERE " + DeadLetterField("d", "queue") + kEq + "$3::pg_catalog.text ORDER BY " +
	       OriginalIdSql("d") + ", d.msg_id LIMIT $1 FOR UPDATE SKIP LOCKED)) RETURNING q.msg_id, " + OriginalIdSql("q") +
	       " AS original_id, q.message, q.headers), ins AS (INSERT INTO " + QualifiedTable(queue_table) +
	       " (vt, message, headers) SELECT $2, m.message, " + headers +
	       " FROM moved AS m ORDER BY m.original_id, m.msg_id RETURNING 1) SELECT pg_catalog.count(*) FROM ins";
}

std::string DeadLetterSourcesSql(std::string_view dead_letter_table)
{
	const std::string source = DeadLetterField("d", "queue");
	return "SELECT " + source + ", pg_catalog.count(*) FROM " + QualifiedTable(dead_letter_table) + " AS d WHERE " +
	       source + " IS NOT NULL GROUP BY 1 ORDER BY 1";
}

}  // namespace pgmq::core
