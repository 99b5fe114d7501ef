// include/pgmq/pg/stream.hpp
// What the stream entry points share (docs/streams.md): resolving a stream
// argument, the search_path the core's stream SQL is written for, and the
// maintenance of a stream's partitions. Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "access/xact.h"
#include "utils/guc.h"
}

namespace pgmq::pg {

// Whether relid is a stream's message table: partitioned, with a column
// "xid" of type xid8. One syscache lookup.
bool IsStreamTable(Oid relid);

// ERROR 42809 naming what to call instead when queue is a stream: the
// queue functions that lease, delete or archive single messages would
// change them for every group.
void RefuseStream(const QueueRef &queue);

// ResolveQueue, then ERROR 42809 unless it is a stream; checks the table
// against the rule for what it may carry (table_shape.hpp).
void ResolveStream(FunctionCallInfo fcinfo, int argno, QueueRef *queue);

// ERROR 42501 unless the current role may read the stream's table (SELECT):
// what reading, acknowledging and seeking as a group need.
void RequireStreamRead(const QueueRef &stream);

// ERROR 42501 unless the current role has the privileges of the stream
// table's owner: what subscribing and unsubscribing need; action names it.
void RequireStreamOwner(const QueueRef &stream, const char *action);

// ERROR 42501 unless the current role may send to the group's dead-letter
// queue `dead_letter` (text): its readers set messages aside into it, and
// the row-level security of pgmq.consumer_groups requires it.
void RequireDeadLetterSend(const QueueRef &stream, Datum group, Datum dead_letter);

// Whether the current role may act as a group whose reader is the role
// named reader_role (a name Datum): it has that role's privileges, or owns
// the stream. A role that no longer exists admits the owner only.
bool ActsAsGroupReader(const QueueRef &stream, Datum reader_role);

// ERROR 42501 unless ActsAsGroupReader: a group with a reader is read,
// acknowledged and moved only with that role's privileges.
void RequireGroupReader(const QueueRef &stream, Datum group, Datum reader_role);

// The group argument: ERROR 22004 when NULL.
Datum GroupArgument(FunctionCallInfo fcinfo, int argno);

// ERROR 42704: the stream has no such group, with a hint to subscribe.
[[noreturn]] void NoSuchGroup(const QueueRef &stream, Datum group);

// Runs fn (a POD frame that may ereport) with search_path pg_catalog,
// pg_temp, restored afterwards.
template <typename Fn>
void InStreamScope(Fn &&fn)
{
	const int nest_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
	                         false);
	fn();
	AtEOXact_GUC(false, nest_level);
}

// Makes the stream's next partition when less than half of the newest one's
// width is left ahead of the next transaction id (or when there is none),
// as the current user. Returns the partitions made. Requires SPI.
int64 MakeStreamPartitionsAhead(const QueueRef &stream, Datum stream_name);

// Truncates (or drops, when that takes no wait) the partitions the stream's
// groups and retention let go, and deletes what they let go of the default
// partition, as the current user. Returns the partitions reclaimed.
// Requires SPI.
int64 ReclaimStreamPartitions(const QueueRef &stream, Datum stream_name);

// Both, for every stream (only_queue_table: that one's, q_x), each as the
// stream table's owner in a subtransaction, committed as mode says; a
// stream whose owner's privileges the current user lacks is skipped with a
// WARNING. Adds the partitions made and reclaimed.
void MaintainStreams(const char *only_queue_table, MemoryContext context, Commits mode, int64 *made, int64 *reclaimed);

}  // namespace pgmq::pg
