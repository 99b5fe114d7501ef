// include/pgmq/pg/maintenance.hpp
// Partition maintenance of partitioned queues, table by table, shared by the
// procedure pgmq.run_partition_maintenance, the recovery procedure and the
// pgmq maintenance background worker (see core/maintenance.hpp for why it
// is done table by table, and from the sequence). Adapter internals: all
// functions may ereport, and require SPI to be connected.
#pragma once

#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"

#include <string>

#include "pgmq/pg/boundary.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace pgmq::pg {

// How work is split into transactions between tables.
enum class Commits {
	None,       // one transaction (the caller's); subtransactions isolate the tables
	Procedure,  // SPI_commit after each table: a procedure with a non-atomic SPI connection
	Worker,     // a background worker: finish SPI, commit, start a new transaction, reconnect
};

// One partman-managed table of a queue, in memory that outlives commits.
struct MaintainedTable {
	char *queue_name;               // as in pgmq.meta
	char parent[NAMEDATALEN + 8];   // pgmq.q_x, partman's name for it
	char table[NAMEDATALEN];        // q_x or a_x
	char queue_table[NAMEDATALEN];  // q_x: the queue's table, whose sequence numbers both
	bool is_archive;
	core::PartitionKind kind;
	int64 step;       // partition_interval of an id-partitioned table, else 0
	int32 premake;
	bool has_retention;  // an id retention that pgmq also applies from the sequence
	int64 retention;
	bool keeps_tables;  // retention keeps or moves tables: pgmq drops none
	// Set by CheckMaintainedTable for the run at hand: the parent's oid and
	// owner, the role everything done to the table runs as.
	Oid relid;
	Oid owner;
};

struct MaintainedTables {
	MaintainedTable *tables;
	int count;
};

// Lists the tables to maintain (only_queue_table NULL: every queue's tables
// with automatic maintenance on; otherwise the tables of the queue whose
// table is only_queue_table, q_x), allocating the list in context. A name
// in pgmq.meta that is no queue name gets a WARNING and is left out.
void ListMaintainedTables(const Partman &partman, const char *only_queue_table, MemoryContext context,
                          MaintainedTables *list);

// Whether pgmq may maintain table now, checked from the catalog before
// anything touches it, as VACUUM checks: pgmq.<table> is a partitioned
// table (what pg_partman's configuration says it is); the current user has
// the privileges of its owner; for an archive, the queue's table is a table
// with the same owner; its default partition, if any, is a plain table of
// that owner partitioning it. Sets table->relid and table->owner and
// returns true; or writes why not into why (for a WARNING naming the table,
// which must not name another relation) and the SQLSTATE into *sqlstate.
bool CheckMaintainedTable(MaintainedTable *table, char *why, size_t cap, int *sqlstate);

// Runs fn (a POD-frame function that may ereport) as role owner, the way
// PostgreSQL runs VACUUM, ANALYZE and REFRESH MATERIALIZED VIEW: under
// SECURITY_RESTRICTED_OPERATION (restricted) or only a local user id change
// (not restricted: for a temporary table pgmq makes, which SRO forbids),
// with search_path pg_catalog, pg_temp and DateStyle ISO, and every
// setting fn changes (SET as well as SET LOCAL; pg_partman SETs search_path)
// put back afterwards.
// The user id and settings are restored on error too (the (sub)transaction
// abort would also restore them).
template <typename Fn>
void AsOwner(Oid owner, Fn &&fn, bool restricted = true);

// AsOwner(table.owner): table must have passed CheckMaintainedTable.
template <typename Fn>
void AsTableOwner(const MaintainedTable &table, Fn &&fn, bool restricted = true);

// Commits the work so far as mode says (nothing for None), and reconnects
// SPI, which frees the results kept so far (memory of the caller's context
// and the table list are kept). Anything allocated since SPI_connect is gone.
void CommitBetweenTables(Commits mode);

// What one maintenance pass did.
struct MaintenanceTally {
	int tables;
	int failures;
	int skipped;    // tables CheckMaintainedTable refused
	int spilled;    // tables maintained without error that still have rows in their default partition
	int64 created;  // partitions premade from the sequence (existing ones not counted)
	int64 dropped;  // empty partitions dropped by retention from the sequence
};

// Maintains each table of list: pg_partman's run_maintenance for the table,
// then (id partitions) premaking and retention from the queue's sequence,
// each in a subtransaction of its own, committing after each table as mode
// says. A failure becomes a WARNING naming the queue and the table, and the
// next table is maintained regardless; so do messages left in a default
// partition.
void MaintainTables(const Partman &partman, MaintainedTables *list, Commits mode, MaintenanceTally *tally);

// pg_partman's run_maintenance for one table, as its owner, if pg_partman's
// maintenance lock is free (returns false, having done nothing, when
// another session holds it). With a timeout, it first takes a SHARE lock on
// the table (waiting at most that long), which it keeps to the end of the
// (sub)transaction: no insert is in flight while partitions are created.
bool RunPartmanMaintenance(const Partman &partman, const MaintainedTable &table,
                           const char *hold_table_timeout_ms = nullptr);

// Premakes the id partitions of table from its queue's sequence (skipping
// ranges with rows in the default partition) and, when retention is set
// and asked for, drops the empty partitions retention measured from the
// sequence reaches. Adds to *created / *dropped.
void MaintainFromSequence(const Partman &partman, const MaintainedTable &table, bool apply_retention, int64 *created,
                          int64 *dropped);

// Whether the default partition of table holds rows.
bool DefaultPartitionHasRows(const MaintainedTable &table);

// From C++ code inside RunCore: whether pgmq.<default_table> exists. May throw.
bool DefaultPartitionExists(const std::string &default_table);

// ERROR 42809: the queue's tables are not managed by pg_partman.
[[noreturn]] void NotPartitioned(const QueueRef &queue);

// Column `column` of the first row of the last SPI result as bool (NULL:
// false). Requires SPI.
bool FirstRowBool(int column);

// Length of the first line of an error message, for "%.*s": pg_partman
// appends CONTEXT/DETAIL/HINT lines to the message of errors it re-raises.
inline int FirstLineLength(const char *message) { return static_cast<int>(strcspn(message, "\n")); }

// ---------------------------------------------------------------- templates

template <typename Fn>
void AsOwner(Oid owner, Fn &&fn, bool restricted)
{
	Oid saved_user = InvalidOid;
	int saved_context = 0;
	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(owner, saved_context | (restricted ? SECURITY_RESTRICTED_OPERATION : SECURITY_LOCAL_USERID_CHANGE));
	const int nest_level = NewGUCNestLevel();
	PG_TRY();
	{
		(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
		                         true, 0, false);
		// pg_partman 5.x moves rows by comparing times as text, which orders
		// them only in ISO style ('Sun Nov 29' sorts after 'Mon Nov 30').
		(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
		fn();
	}
	PG_CATCH();
	{
		AtEOXact_GUC(false, nest_level);
		SetUserIdAndSecContext(saved_user, saved_context);
		PG_RE_THROW();
	}
	PG_END_TRY();
	// false: undo what fn SET too, as VACUUM and REFRESH MATERIALIZED VIEW do.
	AtEOXact_GUC(false, nest_level);
	SetUserIdAndSecContext(saved_user, saved_context);
}

template <typename Fn>
void AsTableOwner(const MaintainedTable &table, Fn &&fn, bool restricted)
{
	if (!OidIsValid(table.owner))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq: %s was not checked before maintenance", table.parent)));
	AsOwner(table.owner, fn, restricted);
}

}  // namespace pgmq::pg
