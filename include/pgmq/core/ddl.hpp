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

// Which of a queue's relations exist already, as the adapter found them
// (after checking that pgmq made them for this queue and the caller may
// use them). create* keeps IF NOT EXISTS, and so upstream's "already exists,
// skipping" NOTICE, for those only; a missing relation is made with a plain
// CREATE, so one that another role makes meanwhile (it need not take the
// queue's lock) is an error, never silently adopted.
struct ExistingRelations {
	bool queue_table = false;
	bool archive_table = false;
	bool queue_index = false;    // q_<name>_part_idx of a partitioned queue
	bool archive_index = false;  // archived_at_idx_<name>
};

// "CREATE TABLE IF NOT EXISTS " when the table exists, else "CREATE TABLE ".
std::string CreateTablePrefix(bool exists);

// Names of the indexes create* makes, before Postgres truncates them to an
// identifier. The archive's keeps the raw, not lowercased, name (upstream).
std::string QueueIndexName(std::string_view queue_name, bool partitioned);
std::string ArchiveIndexName(std::string_view queue_name);

// Free space left in each page of a queue table, for the row versions reads
// write (HOT updates).
constexpr int kQueueFillfactor = 80;

// The statements for a non-partitioned queue, in upstream's order (q table,
// a table, archived_at index), so the NOTICEs of an idempotent create match
// upstream's. The queue table has no vt index (see ddl.cpp).
std::vector<std::string> CreateQueueStatements(std::string_view queue_name, QueueKind kind,
                                               const ExistingRelations &existing);

// Whether pgmq.meta registers this queue's tables: ($1 queue name) -> the
// registered name when some meta row's name maps to the same tables (any
// ASCII case, as TableName lowercases), so a second spelling of one's own
// queue stays idempotent (and makes no second archive index) and a second
// spelling of another's queue is not "new".
std::string QueueRegisteredSql();

// An unlogged queue table's identity sequence is unlogged too (PostgreSQL
// 15+), so a crash would restart msg_ids at 1 while the (logged) archive
// keeps the old ids: later ids would repeat and archive() would fail on the
// archive's primary key. create_unlogged makes the sequence logged: the
// messages are lost on a crash, as documented, but ids keep increasing.
// UnloggedSequenceSql: ($1 queue table, quoted and qualified) -> the
// sequence's quoted name, one row only while it is unlogged.
std::string UnloggedSequenceSql();
std::string SetSequenceLoggedSql(std::string_view quoted_sequence);

// $1 queue name -> a row when meta has the queue under exactly this name.
std::string QueueInMetaSql();

// INSERT of the meta row: ($1 queue name, $2 is_partitioned, $3 is_unlogged).
std::string InsertMetaSql();

// DROP TABLE IF EXISTS for the queue table then the archive.
std::vector<std::string> DropQueueStatements(std::string_view queue_name);

// DELETE of the queue's meta rows ($1 queue name, any ASCII case); returns
// the names they had.
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
