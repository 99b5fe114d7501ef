// include/pgmq/core/maintenance.hpp
// Partition maintenance and recovery of partitioned queues, table by table.
//
// pg_partman's own background worker calls run_maintenance() for a whole
// database in one transaction: one overrun table (rows in its default
// partition) makes that call fail, and no table of the database is
// maintained any more. pgmq's maintenance runs pg_partman's maintenance for
// one table at a time instead, each in a transaction (or subtransaction) of
// its own, so a failure stays one failure.
//
// pg_partman 4.x also premakes id partitions, and applies id retention,
// relative to the highest msg_id *present* in the table: a queue that its
// consumers keep empty gets no partitions and overruns after
// partition_interval x (premake + 1) messages. pgmq premakes from the
// queue's sequence instead, which knows the newest id even when the table is
// empty; the arithmetic is here (PremakeStarts, RetentionDrops).
//
// Also the statements of recover_partitioned_queue (convert_archive_partitioned's
// are in partition.hpp). Glossary: a "table" is a partman parent,
// pgmq.q_<name> (the queue) or pgmq.a_<name> (its archive); its "default
// partition" <table>_default receives the rows no partition covers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgmq/core/partition.hpp"

namespace pgmq::core {

// pg_partman's configuration of the tables in schema pgmq, one row per
// parent table: () -> parent_table (partman's name, pgmq.q_x), control,
// partition_interval, premake, retention (NULL: none), keeps_tables
// (retention keeps tables or moves them to another schema: pgmq then drops
// nothing itself), automatic (automatic_maintenance = 'on'). Tables being
// undone are left out. Which of them belong to which queue is decided from
// the names in pgmq.meta (QueueNamesSql), in C++: a name there that is no
// queue name is skipped, not an error for every queue.
std::string PartConfigSql(std::string_view partman_schema);

// () -> the queue names of pgmq.meta, by name.
std::string QueueNamesSql();

// Tries the transaction-level advisory lock that pg_partman's
// run_maintenance takes (it returns without doing anything when it cannot):
// () -> whether it was granted. Any role can hold that lock, so pgmq does
// not wait for it: a table whose turn finds it taken skips pg_partman's
// step this run, as pg_partman's own maintenance would.
std::string TryPartmanMaintenanceLockSql();

// run_maintenance for one parent table ($1).
std::string RunPartmanMaintenanceSql(std::string_view partman_schema);

// Where an id-partitioned table stands, for premaking from the sequence:
// ($1 the queue table as a quoted qualified name, pgmq."q_x") -> last_id (the newest msg_id handed out by the queue's sequence, NULL
// if none yet), oldest_queued (for an archive: the oldest msg_id still in
// the queue, NULL if empty; NULL for a queue), default_max (the highest
// msg_id in the default partition, NULL if it is empty or missing).
// Tables are unquoted relation names in schema pgmq.
std::string IdPositionSql(std::string_view queue_table, std::string_view table, bool archive, bool has_default);

struct IdPosition {
	int64_t step = 0;                      // partition_interval, > 0
	int32_t premake = 0;                   // partitions to keep ahead
	std::optional<int64_t> last_id;        // newest msg_id handed out
	std::optional<int64_t> oldest_queued;  // archive only: oldest msg_id in the queue
	std::optional<int64_t> default_max;    // highest msg_id in the default partition
};

// The first id of the partition holding id (step > 0): id rounded down to a
// multiple of step, also below 0 (-5 is in [-10, 0)). Where that would lie
// below INT64_MIN, INT64_MIN. Never overflows.
int64_t PartitionStart(int64_t id, int64_t step);

// start + step, the (exclusive) end of a partition, if it is an int8.
std::optional<int64_t> PartitionEnd(int64_t start, int64_t step);

// Most partitions one maintenance run creates for a table: a bound on the
// locks one transaction takes (each new partition takes several, and the
// lock table holds max_locks_per_transaction per connection), not a limit
// anyone should reach. The rest follow in later runs, newest first.
constexpr std::size_t kMaxPremadePerRun = 100;

// Starts of the id partitions a table should have, from the sequence: the
// partition of the newest id and `premake` after it; for an archive also
// every partition down to that of the oldest message still in the queue
// (any of them may be archived, and an archive that was rarely written has
// gaps). Never a partition at or below the highest id in the default
// partition: pg_partman cannot create those, and rows there wait for
// recovery; never one whose end would not fit an int8. Returns those that
// are not in `existing` (the starts of the partitions there are,
// ascending), ascending, the newest kMaxPremadePerRun at most. No
// arithmetic here overflows, whatever the ids.
std::vector<int64_t> PremakeStarts(const IdPosition &position, const std::vector<int64_t> &existing);

// Retention measured from the sequence: the partitions [start, start +
// step) with start + step <= last_id - retention, that is those pg_partman
// would drop if the newest message were still present. pgmq drops them
// only when they are empty (PartitionIsEmptySql), so a queue its consumers
// keep empty does not pile up empty partitions, and nothing is lost. For an
// archive only partitions below the oldest message still in the queue (it
// may still be archived). Never the highest partition. Takes the starts of
// the existing partitions (any order), returns those to drop, ascending.
std::vector<int64_t> RetentionDrops(const IdPosition &position, int64_t retention, std::vector<int64_t> starts);

// The partitions of a parent: ($1 parent's oid) -> partition table name,
// first id of its range, end of its range (NULL, NULL for the default
// partition or a bound that is not an int8 range), whether it is pgmq's to
// act on (a plain table in schema pgmq with the parent's owner: a role can
// attach a table of its own from any schema, named like anything). Read
// from the catalog: cheaper than asking pg_partman for each partition.
std::string IdPartitionsSql();

// Whether [start, end) is a partition as pg_partman makes them for step:
// starting at a multiple of step, step ids wide.
bool IsPartmanIdPartition(int64_t start, int64_t end, int64_t step);

// create_partition_id for ($1 parent table, $2 bigint[] starts), without the
// ANALYZE of the whole partition set pg_partman 4.x runs by default.
std::string CreateIdPartitionsSql(std::string_view partman_schema, int partman_major);

// Recovery moves the rows of the default partition one partition_interval
// at a time. Creating the partition of a range that messages are still
// being inserted into (the newest range of a queue; any range of an
// archive, since archive() inserts old ids; the current one by time) would
// make an insert that waited for the default partition's lock fail with
// "new row ... violates partition constraint". Such a batch runs under a
// SHARE lock on the table, so that no insert is in flight and new ones wait
// at the table until the partition exists; with a lock_timeout, so that a
// long transaction holding the table cannot stall producers behind it.
//
// For a queue by msg_id: () with ($1 the queue table quoted and qualified)
// -> the newest msg_id handed out, the lowest msg_id in the default
// partition (the next batch's range).
std::string NextBatchSql(std::string_view table);
// Whether the next batch must hold the table, from those two values.
bool BatchNeedsLock(const std::optional<int64_t> &last_id, const std::optional<int64_t> &default_min, int64_t step);
std::string SetLocalLockTimeoutSql();  // ($1 milliseconds as text)
std::string LockTableShareSql(std::string_view table);

// Whether pgmq.<table> has no row: () -> boolean.
std::string PartitionIsEmptySql(std::string_view table);

// DROP TABLE of a partition in schema pgmq.
std::string DropPartitionSql(std::string_view table);

// The temporary table pg_partman's partition_data_id/_time moves rows of the
// default partition through (its own statement, IF NOT EXISTS): made before
// the move, because the move runs under SECURITY_RESTRICTED_OPERATION,
// where PostgreSQL allows no new temporary table.
std::string CreatePartmanMoveTableSql(std::string_view default_table);

// Whether pgmq.<table> exists: ($1 qualified, quoted name) -> boolean.
std::string RelationExistsSql();

// Whether the default partition pgmq.<table> has a row: () -> boolean.
std::string DefaultHasRowsSql(std::string_view default_table);

// One batch of pg_partman's partition_data_id/_time: moves one
// partition_interval of rows out of the default partition of ($1 parent
// table) into a partition of its own, created as needed; returns the rows
// moved (0: the default partition is empty).
std::string MoveOutOfDefaultSql(std::string_view partman_schema, PartitionKind kind);

// ANALYZE pgmq.<table>.
std::string AnalyzeSql(std::string_view table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
