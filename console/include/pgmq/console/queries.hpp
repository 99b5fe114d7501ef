// console/include/pgmq/console/queries.hpp
// The SQL the console runs. All of it runs as the connecting role, with
// search_path set to pg_catalog; pgmq's functions are schema-qualified.
// An overview costs one transaction of two statements whatever the number
// of queues: the catalog (queues, privileges, pgmq's rule for what a queue
// table may carry, pgmq.metrics, policies, partitions) and one
// UNION ALL over the queue tables that hold messages not visible now,
// splitting them into leased and delayed and finding the oldest visible
// one (in a queue whose messages are all visible, the oldest message is).
#pragma once

#include <string>
#include <vector>

namespace pgmq::console {

// What the catalog statement may call: which of pgmq-cpp's functions the
// database has (upstream pgmq has none of them), and whether queue owners
// are trusted where there is no rule (--trust-queue-owners).
struct CatalogShape {
	bool table_rule = true;  // pgmq._tables_running_foreign_code
	bool policies = true;    // pgmq.policies and pgmq.list_policies
	bool pause = true;       // pgmq.policies.paused_at
	bool partition_status = true;
	bool streams = true;  // pgmq.stream_groups (stream_queries.hpp)
	bool trust_owners = false;
};

// One row per queue ($1: one queue's name, or NULL for all), with a single
// json column (see queries.cpp for the keys). With the table rule it locks
// the tables it finds readable until the end of the transaction; without it
// ($2: the oids of the tables kLockableSql listed and LOCK TABLE locked),
// only those are read, and only where their owners pass the owner rule.
std::string CatalogSql(const CatalogShape &shape);
// Without the table rule, first: oid and qualified name of each queue and
// archive table the role may read ($1 as above), to lock before the catalog.
extern const char kLockableSql[];
// Sampler: queue, relid, rows inserted and rows updated (the queue tables'
// statistics, summed over partitions), for the queues the role may read.
extern const char kCountersSql[];
// current_user, current_database(), server version.
extern const char kSessionSql[];

// "ident" as PostgreSQL quotes an identifier, always quoted.
std::string QuoteIdentifier(const std::string &name);

// Columns: i (the table's index in relnames), visible, leased, delayed,
// oldest_visible_age_sec; one row per table of schema pgmq (one snapshot).
std::string DepthSql(const std::vector<std::string> &relnames);

enum class MessageSource { kQueue, kArchive, kDeadLetters };
// A page of one table's messages, as one json array: $1 cursor (bigint or
// NULL), $2 headers to contain (jsonb or NULL), $3 JSON path the body must
// match (jsonpath or NULL), $4 limit, $5 for dead letters the source queue's
// name (their x-pgmq-dead-letter header's "queue"), else NULL.
std::string MessagesSql(const std::string &relname, MessageSource source, bool newest_first);

}  // namespace pgmq::console
