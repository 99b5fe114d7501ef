// console/include/pgmq/console/stream_queries.hpp
// The SQL of a stream's consumer groups and partitions (docs/streams.md):
// pgmq.stream_groups and pgmq.stream_partitions read the stream's table, so,
// like pgmq.metrics, they are asked only about streams whose table passed
// the rule for queue tables in the same transaction (the catalog's
// "readable"), never about every stream at once.
#pragma once

#include <string>

namespace pgmq::console {

// The catalog's lateral join for the queue row q (with q.readable and
// q.queue_name): sg.is_stream and sg.groups, a json array of the groups, each
// pgmq.stream_groups' columns and the ages the page and the alerts use:
// oldest_pending_age_sec, last_read_age_sec, last_ack_age_sec, idle_sec
// (since the last read, or the subscribe for a group that never read).
std::string StreamCatalogJoin();

// The catalog's json fields for it: 'stream' (boolean, NULL when unreadable),
// 'listed_stream' (named in pgmq.streams) and 'stream_groups'.
extern const char kStreamCatalogFields[];

// $1 a stream: one json array of pgmq.stream_partitions' rows.
extern const char kStreamPartitionsSql[];

// $1 stream, $2 group, $3 since (timestamptz text): pgmq.seek.
extern const char kStreamSeekSql[];

}  // namespace pgmq::console
