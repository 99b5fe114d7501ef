// src/core/ddl.cpp
// DDL text for queue lifecycle (see ddl.hpp). May throw std::bad_alloc.
#include "pgmq/core/ddl.hpp"

#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

// Columns in upstream 1.10.1+ order; clients decode message_record by position.
constexpr const char *kQueueColumns =
	"(msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY, "
	"read_ct INT DEFAULT 0 NOT NULL, "
	"enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL, "
	"last_read_at TIMESTAMP WITH TIME ZONE, "
	"vt TIMESTAMP WITH TIME ZONE NOT NULL, "
	"message pg_catalog.jsonb, "
	"headers pg_catalog.jsonb)";

constexpr const char *kArchiveColumns =
	"(msg_id BIGINT PRIMARY KEY, "
	"read_ct INT DEFAULT 0 NOT NULL, "
	"enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL, "
	"last_read_at TIMESTAMP WITH TIME ZONE, "
	"archived_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL, "
	"vt TIMESTAMP WITH TIME ZONE NOT NULL, "
	"message pg_catalog.jsonb, "
	"headers pg_catalog.jsonb)";

}  // namespace

std::string CreateTablePrefix(bool exists) { return exists ? "CREATE TABLE IF NOT EXISTS " : "CREATE TABLE "; }

std::string QueueIndexName(std::string_view queue_name, bool partitioned)
{
	return TableName("q", queue_name) + (partitioned ? "_part_idx" : "_vt_idx");
}

std::string ArchiveIndexName(std::string_view queue_name) { return "archived_at_idx_" + std::string(queue_name); }

std::vector<std::string> CreateQueueStatements(std::string_view queue_name, QueueKind kind,
                                               const ExistingRelations &existing)
{
	const std::string queue_table = TableName("q", queue_name);
	const std::string archive_table = TableName("a", queue_name);
	std::string create_queue = CreateTablePrefix(existing.queue_table);
	if (kind == QueueKind::Unlogged)
		create_queue.replace(0, 6, "CREATE UNLOGGED");
	auto create_index = [](bool exists) { return exists ? "CREATE INDEX IF NOT EXISTS " : "CREATE INDEX "; };
	// Unlike upstream, no index on vt: no read uses it (they scan msg_id from
	// the queue's head), and without it a read's update of vt, read_ct and
	// last_read_at is HOT: no new index entries, a quarter less WAL. The free
	// space per page keeps the updated row on its page (docs/performance.md).
	return {
		create_queue + QualifiedTable(queue_table) + " " + kQueueColumns + " WITH (fillfactor = " +
			std::to_string(kQueueFillfactor) + ")",
		CreateTablePrefix(existing.archive_table) + QualifiedTable(archive_table) + " " + kArchiveColumns,
		create_index(existing.archive_index) + QuoteIdentifier(ArchiveIndexName(queue_name)) + " ON " +
			QualifiedTable(archive_table) + " (archived_at)",
	};
}

// A meta row whose name maps to the tables of queue $1: lower() under the
// "C" collation lowercases ASCII only, as TableName does.
constexpr const char *kMetaNameMatches =
	"pg_catalog.lower(queue_name::pg_catalog.text COLLATE pg_catalog.\"C\") OPERATOR(pg_catalog.=) "
	"pg_catalog.lower($1 COLLATE pg_catalog.\"C\")";

std::string QueueRegisteredSql()
{
	return std::string("SELECT queue_name::pg_catalog.text FROM pgmq.meta WHERE ") + kMetaNameMatches +
	       " ORDER BY queue_name LIMIT 1";
}

std::string UnloggedSequenceSql()
{
	return "SELECT s.seq FROM pg_catalog.pg_get_serial_sequence($1, 'msg_id') AS s(seq) "
	       "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(s.seq) "
	       "WHERE c.relpersistence OPERATOR(pg_catalog.=) 'u'";
}

std::string SetSequenceLoggedSql(std::string_view quoted_sequence)
{
	return "ALTER SEQUENCE " + std::string(quoted_sequence) + " SET LOGGED";
}

std::string QueueInMetaSql()
{
	return "SELECT 1 FROM pgmq.meta WHERE queue_name OPERATOR(pg_catalog.=) $1";
}

std::string InsertMetaSql()
{
	return "INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
}

std::vector<std::string> DropQueueStatements(std::string_view queue_name)
{
	return {
		"DROP TABLE IF EXISTS " + QualifiedTable(TableName("q", queue_name)),
		"DROP TABLE IF EXISTS " + QualifiedTable(TableName("a", queue_name)),
	};
}

std::string DeleteMetaSql()
{
	return std::string("DELETE FROM pgmq.meta WHERE ") + kMetaNameMatches + " RETURNING queue_name::pg_catalog.text";
}

std::string LockQueueTableSql(std::string_view queue_name)
{
	return "LOCK TABLE " + QualifiedTable(TableName("q", queue_name)) + " IN ACCESS EXCLUSIVE MODE";
}

std::string CountQueueSql(std::string_view queue_name)
{
	return "SELECT pg_catalog.count(*) FROM " + QualifiedTable(TableName("q", queue_name));
}

std::string TruncateQueueSql(std::string_view queue_name)
{
	return "TRUNCATE " + QualifiedTable(TableName("q", queue_name));
}

}  // namespace pgmq::core
