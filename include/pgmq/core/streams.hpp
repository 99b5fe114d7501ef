// include/pgmq/core/streams.hpp
// Streams and consumer groups (docs/streams.md): the DDL of a stream's
// tables and the SQL text of every step of a group's read, acknowledgement
// and maintenance. The adapter runs these with search_path pg_catalog,
// pg_temp (StreamScope), so operators and functions here are the built-in
// ones. Values are always parameters; table names are quoted by the core.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgmq::core {

// The header a message set aside for a group carries in the group's
// dead-letter queue: {stream, group, msg_id, read_ct, enqueued_at, moved_at,
// reason}. No "queue" key: redrive never sends it back into the stream,
// where every group would see it again.
constexpr const char *kStreamDeadLetterHeader = "x-pgmq-dead-letter";

// The first partition's width in transaction ids; later ones follow the rate
// (NextPartitionXids).
constexpr int64_t kFirstPartitionXids = 10000;
// A partition is made when less than this share of the newest one's width
// is left ahead of the next transaction id.
constexpr int64_t kPartitionAheadDivisor = 2;

// The width of the next partition: the transaction ids the database used in
// `seconds_per_partition` at the rate seen since the last one was made
// (`xids_used` in `seconds_elapsed`), between 1,000 and 1,000,000,000.
int64_t NextPartitionXids(int64_t xids_used, double seconds_elapsed, double seconds_per_partition);

// How long a partition should cover: a quarter of the retention, between a
// minute and a day.
double SecondsPerPartition(double retention_seconds);

// A stream's partition names: q_<name>_p<n>, q_<name>_default.
std::string StreamPartitionName(std::string_view queue_table, int64_t n);
std::string StreamDefaultPartitionName(std::string_view queue_table);

// create_stream: the partitioned message table (upstream's columns plus xid),
// its msg_id index, its default partition, and an (always empty) archive
// table of the usual shape, so the catalog functions see the usual pair.
std::vector<std::string> CreateStreamStatements(std::string_view queue_table, std::string_view archive_table);

// ($1 stream, $2 relid, $3 retention, $4 max_retention): the streams row.
std::string InsertStreamSql();

// Makes partition [from, to) (transaction ids) of the stream table: created
// on its own, then attached (a SHARE UPDATE EXCLUSIVE lock on the stream
// table: sends go on). Two statements.
std::vector<std::string> CreateStreamPartitionStatements(std::string_view queue_table, std::string_view partition,
                                                         uint64_t from, uint64_t to);

// ($1 stream, $2 now, $3 stream table oid) -> partitions_made, partition_xids, seconds since the
// last partition was made (NULL: none), xids used since then, the upper
// bound of the newest partition (NULL: none), the next transaction id, and
// the retention in seconds.
std::string StreamPartitionStateSql();
// ($1 stream, $2 partitions_made, $3 partition_xids, $4 next xid as text, $5 now).
std::string NoteStreamPartitionSql();

// ($1 stream) -> retention, max_retention in seconds.
std::string StreamRetentionSql();

// () -> every stream's name, for maintenance.
std::string StreamNamesSql();

// Reclaiming a partition without waiting: lock it (dropping: and the stream
// table) with NOWAIT, then drop or truncate it.
std::vector<std::string> DropStreamPartitionStatements(std::string_view queue_table, std::string_view partition);
std::vector<std::string> TruncateStreamPartitionStatements(std::string_view partition);

// ($1 stream table oid) -> partition name, from, to (xid8; NULL for the
// default partition), is_default, bytes, in xid order.
std::string StreamPartitionsSql();

// The newest message's enqueued_at (its transaction's start) in a partition,
// from the end of its key: no scan.
std::string NewestInPartitionSql(std::string_view partition);

// ($1 stream, $2 to xid as text, $3 now, $4 retention s, $5 max_retention s)
// -> whether range partition `partition` may go: no running transaction can
// still write to it; and it is empty, or its newest message is older than
// max_retention, or older than the retention with every group's window
// starting past it and none of it in a lease.
std::string PartitionReclaimableSql(std::string_view partition);

// ($1 stream, $2 now, $3 retention s, $4 max_retention s): deletes the rows
// of the default partition (where sends land only when maintenance fell
// behind) that every group has passed and the retention lets go, row by row.
std::string DefaultPartitionCleanupSql(std::string_view partition);

// subscribe: ($1 stream, $2 group, $3 since or NULL, $4 ordered, $5 dead-letter
// queue or NULL, $6 max_deliveries or NULL, $7 reader role name or NULL).
// A new group starts after what is committed now (since NULL), or at the
// beginning with a floor on enqueued_at. Returns a row when it made the
// group; none when the group exists.
std::string SubscribeNewSql();

// ($1 stream, $2 group, $3 ordered, $4 dead-letter queue or NULL, $5
// max_deliveries or NULL, $6 reader role name or NULL): an existing group
// takes the options and keeps its cursor. Returns a row when it exists.
std::string SubscribeOptionsSql();

// ($1 stream, $2 group) -> the group's dead-letter queue (text, NULL: none)
// and its reader (name, NULL: any reader of the stream).
std::string GroupGuardsSql();

// ($1 stream, $2 group) -> true when a group was removed.
std::string UnsubscribeSql();

// seek: ($1 stream, $2 group, $3 floor msg_id or NULL, $4 floor time or NULL):
// an empty window before every transaction, the floors from now on,
// no leases. Returns a row when the group exists.
std::string SeekSql();

// The statements below that name a "location" select the group's row by
// ctid (pg/group_row.hpp) as well as by its key: a location that is not
// where the row's visible version is selects nothing.

// Locks the group row: ($1 stream, $2 group[, $3 location unless by_key])
// -> the row's ctid when the group exists (and is there).
// Apart from GroupStateSql: a statement that waited for the lock reads the
// row the other transaction left only in its next statement (READ
// COMMITTED), and a LATERAL over the row's leases would still see the old.
std::string LockGroupSql(bool by_key);

// After LockGroupSql: ($1 stream, $2 group, $3 now as epoch seconds[, $4
// location unless by_key]) -> ordered, max_deliveries, dead_letter_queue,
// the number of leases, and the first expired lease: batch, deliveries,
// msg_ids (int8[]); NULL when none has expired; whether the group's window
// ends at the empty snapshot a seek or a subscribe from a time leaves (see
// AnchorSql); the row's ctid; and the group's reader (name, NULL: any).
std::string GroupStateSql(bool by_key);

// The next messages of the group's current window after its position, at
// most $3, at or above the group's floors, in (xid, msg_id) order: ($1
// stream, $2 group, $3 qty, $4 location) -> one row:
// their msg_ids (int8[], NULL when none), the last one's xid and msg_id (the
// new position), with cut the new window_end, and whether the group's row
// was at the location. With cut, the
// window that starts at the group's window_end and ends at the current
// snapshot instead.
std::string WindowMessagesSql(std::string_view queue_table, bool cut);

// Records a new lease after a read: ($1 stream, $2 group, $3 msg_ids int8[],
// $4 lease end epoch seconds, $5 new window_end or NULL (no cut), $6
// position xid8, $7 position msg_id, $8 now, $9 location) -> the row's new
// ctid.
std::string RecordLeaseSql();

// A group whose window ends at the empty snapshot (seek, subscribe from a
// time) and whose next window holds nothing above its floors: ($1 stream,
// $2 group, $3 the cut, $4 location) makes that window its current one, so that its
// reads start from the cut, not from every transaction again. Returns the
// row's new ctid.
std::string AnchorSql();

// The leased messages as message_record rows: ($1 msg_ids int8[], $2
// read_ct, $3 now (last_read_at), $4 vt), in (xid, msg_id) order. By msg_id
// alone (its index): a window of one large transaction shares one xid.
std::string EmitSql(std::string_view queue_table);

// Extends an expired lease for another delivery: ($1 stream, $2 group, $3
// batch, $4 lease end epoch seconds, $5 now, $6 location) -> deliveries
// so far, the row's new ctid.
std::string RenewLeaseSql();

// Acknowledges (after LockGroupSql): ($1 stream, $2 group, $3 ids int8[],
// $4 now, $5 location) -> each id the group held a lease on, removed from
// its lease (a lease with no id left goes), with the row's new ctid. No
// update when none was held.
std::string AckSql();

// Ends the group's lease on one message early (after LockGroupSql): ($1
// stream, $2 group, $3 msg_id, $4 new lease end epoch seconds, $5
// location): the message gets a lease of its own ending then, with the
// deliveries so far, so that a read after it delivers it again; in an
// ordered group the whole lease holding it ends then. -> the row's new
// ctid, no row when the group held no lease on it.
std::string ReleaseSql();

// Whether the group holds a lease on $3: ($1 stream, $2 group, $3 msg_id,
// $4 location) ->
// deliveries of its lease, or no row.
std::string LeaseOfSql();

// Copies messages to a group's dead-letter queue: ($1 ids int8[], $2 stream,
// $3 group, $4 now, $5 reason or NULL, $6 deliveries) -> msg_id in the
// dead-letter queue of each.
std::string SetAsideSql(std::string_view queue_table, std::string_view dead_letter_table);

// The groups: ($1 stream or NULL, $2 now as epoch seconds) -> stream, group,
// in_flight (in leases not run out), last_read_at, last_ack_at, ordered,
// dead_letter_queue, max_deliveries, subscribed_at.
std::string GroupsSql();
// ($1 stream, $2 group, $3 stream table oid, $4 now as epoch seconds) ->
// pending (not given yet, or in a lease that ran out), the oldest pending
// one's enqueued_at, and the bytes of the partitions the group has not
// passed.
std::string GroupBacklogSql(std::string_view queue_table);

// ($1 stream): purge_queue of a stream ends its groups' leases.
std::string ClearLeasesSql();

// The newest message's enqueued_at in range [$1, $2) (xid8 as text), through
// the stream table (whose privileges are the ones granted): the key's last
// entry in the one partition the range prunes to.
std::string NewestInRangeSql(std::string_view queue_table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
