// include/pgmq/core/ddl.hpp
// DDL of queue lifecycle: the q_/a_ tables, their indexes, the meta row.
// Run once per call (not cached); identifiers are always quoted, the meta
// values are parameters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pgmq::core {

enum class QueueKind { Logged, Unlogged };

// CREATE ... IF NOT EXISTS statements for a non-partitioned queue, in
// upstream's order (q table, a table, vt index, archived_at index), so the
// NOTICEs of an idempotent create match upstream's.
std::vector<std::string> CreateQueueStatements(std::string_view queue_name, QueueKind kind);

// An unlogged queue table's identity sequence is unlogged too (PostgreSQL
// 15+), so a crash would restart msg_ids at 1 while the (logged) archive
// keeps the old ids: later ids would repeat and archive() would fail on the
// archive's primary key. create_unlogged makes the sequence logged: the
// messages are lost on a crash, as documented, but ids keep increasing.
// UnloggedSequenceSql: ($1 queue table, quoted and qualified) -> the
// sequence's quoted name, one row only while it is unlogged.
std::string UnloggedSequenceSql();
std::string SetSequenceLoggedSql(std::string_view quoted_sequence);

// INSERT of the meta row: ($1 queue name, $2 is_partitioned, $3 is_unlogged).
std::string InsertMetaSql();

// DROP TABLE IF EXISTS for the queue table then the archive.
std::vector<std::string> DropQueueStatements(std::string_view queue_name);

// DELETE of the meta row ($1 queue name); returns is_partitioned.
std::string DeleteMetaSql();

// Row count, then TRUNCATE, of the queue table.
// Takes the queue table's ACCESS EXCLUSIVE lock, so the count that follows
// is exactly what TRUNCATE deletes (sends that commit while purge waits
// are counted too).
std::string LockQueueTableSql(std::string_view queue_name);
std::string CountQueueSql(std::string_view queue_name);
std::string TruncateQueueSql(std::string_view queue_name);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
