// console/src/stream_queries.cpp
#include "pgmq/console/stream_queries.hpp"

namespace pgmq::console {

// Which queues are streams: as pgmq decides it, by the table (a
// partitioned table with an xid8 column xid), not by pgmq.streams, whose row
// its owner may point elsewhere. Listed in pgmq.streams by name is what the
// "messages wait too long" query of docs/monitoring.md leaves out, and so
// does the console (listed_stream). stream_groups, which reads the stream's
// table, is asked only where the table passed the rule: OFFSET 0 keeps the
// lateral apart from the join, so its WHERE on the outer row is a one-time
// filter. to_jsonb(g) keeps every column stream_groups returns.
std::string StreamCatalogJoin()
{
	return R"SQL(
  LEFT JOIN LATERAL (
    SELECT EXISTS (SELECT FROM pg_class AS sc JOIN pg_attribute AS sa ON sa.attrelid = sc.oid
                    WHERE sc.oid = q.relid AND sc.relkind = 'p' AND sa.attname = 'xid'
                      AND sa.atttypid = 'pg_catalog.xid8'::regtype AND NOT sa.attisdropped) AS is_stream,
           EXISTS (SELECT FROM pgmq.streams AS ls WHERE ls.stream_name = q.queue_name) AS listed
  ) AS st ON true
  LEFT JOIN LATERAL (
    SELECT (SELECT json_agg(to_jsonb(g) || jsonb_build_object(
                      'oldest_pending_age_sec', extract(epoch FROM now() - g.oldest_pending_at)::float8,
                      'last_read_age_sec', extract(epoch FROM now() - g.last_read_at)::float8,
                      'last_ack_age_sec', extract(epoch FROM now() - g.last_ack_at)::float8,
                      'idle_sec', extract(epoch FROM now() - coalesce(g.last_read_at, g.subscribed_at))::float8)
                    ORDER BY g.group_name)
              FROM pgmq.stream_groups(q.queue_name) AS g) AS groups
     WHERE q.readable AND st.is_stream OFFSET 0
  ) AS sg ON true)SQL";
}

const char kStreamCatalogFields[] =
	"'stream', CASE WHEN q.readable THEN st.is_stream END, 'listed_stream', st.listed, "
	"'stream_groups', CASE WHEN st.is_stream THEN coalesce(sg.groups, '[]') END";

const char kStreamPartitionsSql[] = "SELECT coalesce(json_agg(p), '[]')::text FROM pgmq.stream_partitions($1) AS p";

const char kStreamSeekSql[] = "SELECT pgmq.seek($1, $2, $3::timestamptz)";

}  // namespace pgmq::console
