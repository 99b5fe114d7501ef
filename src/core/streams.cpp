// src/core/streams.cpp
// SQL text of streams and consumer groups (see streams.hpp). Run with
// search_path pg_catalog, pg_temp: built-in operators and functions resolve
// without qualification. May throw std::bad_alloc.
#include "pgmq/core/streams.hpp"

#include <algorithm>
#include <cmath>

#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

constexpr const char *kGroupIs = " WHERE g.stream_name = $1 AND g.group_name = $2";

// The group's row at the location $param (a ctid, group_row.hpp): that row
// version when it is the group's and visible, else no row.
std::string GroupAt(int param)
{
	return " WHERE g.ctid = $" + std::to_string(param) + " AND g.stream_name = $1 AND g.group_name = $2";
}

// The messages of group `g`'s window from `start` to `end` (pg_snapshot
// expressions) that come after its position, as its `q` rows.
std::string InWindow(const std::string &start, const std::string &end)
{
	return "q.xid >= pg_snapshot_xmin(" + start + ") AND q.xid < pg_snapshot_xmax(" + end +
	       ") AND pg_visible_in_snapshot(q.xid, " + end + ") AND NOT pg_visible_in_snapshot(q.xid, " + start + ")";
}

// The floors of a seek or a subscribe from a time: the group reads only
// messages at or after them, until the next seek.
constexpr const char *kFloors =
	"(g.floor_id IS NULL OR q.msg_id >= g.floor_id) AND (g.floor_time IS NULL OR q.enqueued_at >= g.floor_time)";



}  // namespace

int64_t NextPartitionXids(int64_t xids_used, double seconds_elapsed, double seconds_per_partition)
{
	constexpr double kMin = 1000, kMax = 1000000000;
	if (xids_used <= 0 || !(seconds_elapsed > 0))
		return kFirstPartitionXids;
	const double width = static_cast<double>(xids_used) / seconds_elapsed * seconds_per_partition;
	return static_cast<int64_t>(std::clamp(std::isfinite(width) ? width : kMax, kMin, kMax));
}

double SecondsPerPartition(double retention_seconds)
{
	return std::clamp(retention_seconds / 4, 60.0, 86400.0);
}

std::string StreamPartitionName(std::string_view queue_table, int64_t n)
{
	return std::string(queue_table) + "_p" + std::to_string(n);
}

std::string StreamDefaultPartitionName(std::string_view queue_table) { return std::string(queue_table) + "_default"; }

std::vector<std::string> CreateStreamStatements(std::string_view queue_table, std::string_view archive_table)
{
	const std::string q = QualifiedTable(queue_table);
	// Upstream's columns, in upstream's order, then xid. The key leads with
	// xid: a window is an xid range, read in (xid, msg_id) order.
	return {
		"CREATE TABLE " + q +
			" (msg_id BIGINT GENERATED ALWAYS AS IDENTITY, read_ct INT DEFAULT 0 NOT NULL, "
			"enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL, last_read_at TIMESTAMP WITH TIME ZONE, "
			"vt TIMESTAMP WITH TIME ZONE NOT NULL, message jsonb, headers jsonb, "
			"xid xid8 DEFAULT pg_current_xact_id() NOT NULL, PRIMARY KEY (xid, msg_id)) PARTITION BY RANGE (xid)",
		"CREATE INDEX " + QuoteIdentifier(std::string(queue_table) + "_msg_id_idx") + " ON " + q + " (msg_id)",
		"CREATE TABLE " + QualifiedTable(StreamDefaultPartitionName(queue_table)) + " PARTITION OF " + q + " DEFAULT",
		"CREATE TABLE " + QualifiedTable(archive_table) +
			" (msg_id BIGINT PRIMARY KEY, read_ct INT DEFAULT 0 NOT NULL, "
			"enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL, last_read_at TIMESTAMP WITH TIME ZONE, "
			"archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL, vt TIMESTAMP WITH TIME ZONE NOT NULL, "
			"message jsonb, headers jsonb)",
	};
}

std::string InsertStreamSql()
{
	return "INSERT INTO pgmq.streams (stream_name, stream_relid, retention, max_retention) VALUES ($1, $2, $3, $4)";
}

std::vector<std::string> CreateStreamPartitionStatements(std::string_view queue_table, std::string_view partition,
                                                         uint64_t from, uint64_t to)
{
	const std::string p = QualifiedTable(partition);
	// Made empty and apart, then attached: only SHARE UPDATE EXCLUSIVE on the
	// stream table, so sends go on (and the default partition, usually
	// empty, is checked for rows of the range).
	return {
		"CREATE TABLE " + p + " (LIKE " + QualifiedTable(queue_table) + " INCLUDING DEFAULTS)",
		"ALTER TABLE " + QualifiedTable(queue_table) + " ATTACH PARTITION " + p + " FOR VALUES FROM ('" +
			std::to_string(from) + "') TO ('" + std::to_string(to) + "')",
	};
}

std::string StreamPartitionStateSql()
{
	// The next transaction id: past the snapshot's, and past this
	// transaction's own (assigned after its statement's snapshot).
	return "SELECT s.partitions_made, s.partition_xids, extract(epoch FROM $2::timestamptz - s.partitioned_at)::float8, "
	       "n.next - s.partitioned_xid::text::int8, "
	       "(SELECT max(b.m[2]::int8) FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid, "
	       "LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), '^FOR VALUES FROM \\(''(\\d+)''\\) TO "
	       "\\(''(\\d+)''\\)$') AS m) AS b WHERE i.inhparent = $3), "
	       "n.next, extract(epoch FROM s.retention)::float8 FROM pgmq.streams AS s, LATERAL (SELECT greatest("
	       "pg_snapshot_xmax(pg_current_snapshot())::text::int8, pg_current_xact_id_if_assigned()::text::int8 + 1) AS next) "
	       "AS n WHERE s.stream_name = $1";
}

std::string NoteStreamPartitionSql()
{
	return "UPDATE pgmq.streams SET partitions_made = $2, partition_xids = $3, partitioned_at = $5, "
	       "partitioned_xid = $4::text::xid8 WHERE stream_name = $1";
}

std::string StreamRetentionSql()
{
	return "SELECT extract(epoch FROM s.retention)::float8, extract(epoch FROM s.max_retention)::float8 "
	       "FROM pgmq.streams AS s WHERE s.stream_name = $1";
}

std::string StreamNamesSql() { return "SELECT s.stream_name::text FROM pgmq.streams AS s ORDER BY 1"; }

std::vector<std::string> DropStreamPartitionStatements(std::string_view queue_table, std::string_view partition)
{
	const std::string p = QualifiedTable(partition);
	return {"LOCK TABLE ONLY " + QualifiedTable(queue_table) + ", " + p + " IN ACCESS EXCLUSIVE MODE NOWAIT",
	        "DROP TABLE " + p};
}

std::vector<std::string> TruncateStreamPartitionStatements(std::string_view partition)
{
	const std::string p = QualifiedTable(partition);
	return {"LOCK TABLE " + p + " IN ACCESS EXCLUSIVE MODE NOWAIT", "TRUNCATE " + p};
}

std::string StreamPartitionsSql()
{
	return "SELECT c.relname::text, b.m[1]::xid8, b.m[2]::xid8, c.relpartbound IS NOT NULL AND b.m IS NULL, "
	       "pg_total_relation_size(c.oid) FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid, "
	       "LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), '^FOR VALUES FROM \\(''(\\d+)''\\) TO "
	       "\\(''(\\d+)''\\)$') AS m) AS b WHERE i.inhparent = $1 ORDER BY b.m[1]::xid8 NULLS FIRST";
}

std::string NewestInPartitionSql(std::string_view partition)
{
	// The last transaction's start: the key's last entry, not a scan.
	return "SELECT q.enqueued_at FROM " + QualifiedTable(partition) + " AS q ORDER BY q.xid DESC, q.msg_id DESC LIMIT 1";
}

std::string PartitionReclaimableSql(std::string_view partition)
{
	const std::string p = QualifiedTable(partition);
	return "WITH newest AS (" + NewestInPartitionSql(partition) +
	       "), leased AS (SELECT (i.v)::int8 AS id FROM pgmq.consumer_groups AS g, jsonb_array_elements(g.leases) AS l, "
	       "jsonb_array_elements(l.value -> 'ids') AS i(v) WHERE g.stream_name = $1) SELECT CASE "
	       "WHEN $2::xid8 > pg_snapshot_xmin(pg_current_snapshot()) THEN false "
	       "WHEN NOT EXISTS (SELECT FROM newest) THEN true "
	       "WHEN (SELECT enqueued_at FROM newest) < $3 - make_interval(secs => $5) THEN true "
	       "WHEN (SELECT enqueued_at FROM newest) >= $3 - make_interval(secs => $4) THEN false "
	       "WHEN EXISTS (SELECT FROM pgmq.consumer_groups AS g WHERE g.stream_name = $1 "
	       "AND pg_snapshot_xmin(g.window_start) < $2::xid8) THEN false "
	       "ELSE NOT EXISTS (SELECT FROM " + p + " AS q WHERE q.msg_id IN (SELECT id FROM leased)) END";
}

std::string DefaultPartitionCleanupSql(std::string_view partition)
{
	// Rows land in the default partition only when maintenance fell behind;
	// they go row by row (a TRUNCATE could take rows committed after the
	// check), once every group has passed them and the retention allows.
	return "DELETE FROM " + QualifiedTable(partition) +
	       " AS q WHERE (q.enqueued_at < $2 - make_interval(secs => $4)) OR (q.enqueued_at < $2 - make_interval(secs => "
	       "$3) AND q.xid < pg_snapshot_xmin(pg_current_snapshot()) AND NOT EXISTS (SELECT FROM pgmq.consumer_groups "
	       "AS g WHERE g.stream_name = $1 AND (pg_snapshot_xmin(g.window_start) <= q.xid OR g.leases @> "
	       "jsonb_build_array(jsonb_build_object('ids', jsonb_build_array(q.msg_id))))))";
}

std::string SubscribeNewSql()
{
	return "INSERT INTO pgmq.consumer_groups (stream_name, group_name, window_start, window_end, floor_time, "
	       "ordered, dead_letter_queue, max_deliveries, reader_role) VALUES ($1, $2, "
	       "CASE WHEN $3::timestamptz IS NULL THEN pg_current_snapshot() ELSE '1:1:'::pg_snapshot END, "
	       "CASE WHEN $3::timestamptz IS NULL THEN pg_current_snapshot() ELSE '1:1:'::pg_snapshot END, "
	       "CASE WHEN $3::timestamptz > '-infinity' THEN $3 END, $4, $5, $6, $7) "
	       "ON CONFLICT (stream_name, group_name) DO NOTHING RETURNING true";
}

std::string SubscribeOptionsSql()
{
	return std::string("UPDATE pgmq.consumer_groups AS g SET ordered = $3, dead_letter_queue = $4, "
	                   "max_deliveries = $5, reader_role = $6") +
	       kGroupIs + " RETURNING true";
}

std::string GroupGuardsSql()
{
	return std::string("SELECT g.dead_letter_queue::text, g.reader_role FROM pgmq.consumer_groups AS g") + kGroupIs;
}

std::string UnsubscribeSql()
{
	return std::string("DELETE FROM pgmq.consumer_groups AS g") + kGroupIs + " RETURNING true";
}

std::string SeekSql()
{
	return std::string("UPDATE pgmq.consumer_groups AS g SET window_start = '1:1:', window_end = '1:1:', "
	                   "position_xid = NULL, position_id = NULL, floor_id = $3, floor_time = $4, leases = '[]'") +
	       kGroupIs + " RETURNING true";
}

std::string LockGroupSql(bool by_key)
{
	return std::string("SELECT g.ctid FROM pgmq.consumer_groups AS g") + (by_key ? kGroupIs : GroupAt(3)) +
	       " FOR NO KEY UPDATE";
}

std::string GroupStateSql(bool by_key)
{
	return std::string("SELECT g.ordered, g.max_deliveries, g.dead_letter_queue::text, jsonb_array_length(g.leases), "
	                   "e.b, e.n, e.ids, pg_snapshot_xmax(g.window_end) <= '1'::xid8, g.ctid, g.reader_role "
	                   "FROM pgmq.consumer_groups AS g LEFT JOIN LATERAL (SELECT "
	                   "(l.value ->> 'b')::int8 AS b, (l.value ->> 'n')::int AS n, ARRAY(SELECT (i.v)::int8 FROM "
	                   "jsonb_array_elements(l.value -> 'ids') AS i(v)) AS ids "
	                   "FROM jsonb_array_elements(g.leases) AS l WHERE (l.value ->> 'vt')::float8 "
	                   "<= $3 ORDER BY (l.value ->> 'b')::int8 LIMIT 1) AS e ON true") +
	       (by_key ? kGroupIs : GroupAt(4));
}

std::string WindowMessagesSql(std::string_view queue_table, bool cut)
{
	const std::string q = QualifiedTable(queue_table);
	std::string next;
	if (!cut)
		next = std::string("WITH s AS (SELECT NULL::pg_snapshot AS cut), m AS (SELECT q.msg_id, q.xid FROM "
		                   "pgmq.consumer_groups AS g, LATERAL (SELECT q.msg_id, q.xid FROM ") +
		       q + " AS q WHERE " + InWindow("g.window_start", "g.window_end") +
		       // One row comparison (no OR), so the key's index starts at the position.
		       " AND (q.xid, q.msg_id) > (coalesce(g.position_xid, pg_snapshot_xmin(g.window_start)), "
		       "coalesce(g.position_id, 0)) AND " + kFloors +
		       " ORDER BY q.xid, q.msg_id LIMIT $3) AS q" + GroupAt(4) + ")";
	else
		next = std::string("WITH s AS MATERIALIZED (SELECT pg_current_snapshot() AS cut), m AS (SELECT q.msg_id, q.xid "
		                   "FROM pgmq.consumer_groups AS g, s, LATERAL (SELECT q.msg_id, q.xid FROM ") +
		       q + " AS q WHERE " + InWindow("g.window_end", "s.cut") + " AND " + kFloors +
		       " ORDER BY q.xid, q.msg_id LIMIT $3) AS q" + GroupAt(4) + ")";
	return next + " SELECT array_agg(m.msg_id ORDER BY m.xid, m.msg_id), "
	              "(array_agg(m.xid ORDER BY m.xid DESC, m.msg_id DESC))[1], "
	              "(array_agg(m.msg_id ORDER BY m.xid DESC, m.msg_id DESC))[1], (SELECT s.cut FROM s), "
	              "EXISTS (SELECT FROM pgmq.consumer_groups AS g" + GroupAt(4) + ") FROM m";
}

std::string RecordLeaseSql()
{
	return std::string("UPDATE pgmq.consumer_groups AS g SET leases = g.leases || jsonb_build_array(jsonb_build_object("
	                   "'b', g.next_batch, 'ids', to_jsonb($3::int8[]), 'vt', $4::float8, 'n', 1)), "
	                   "next_batch = g.next_batch + 1, "
	                   "window_start = CASE WHEN $5::pg_snapshot IS NULL THEN g.window_start ELSE g.window_end END, "
	                   "window_end = coalesce($5::pg_snapshot, g.window_end), position_xid = $6, position_id = $7, "
	                   "last_read_at = $8") +
	       GroupAt(9) + " RETURNING g.ctid";
}

std::string AnchorSql()
{
	return std::string("UPDATE pgmq.consumer_groups AS g SET window_start = g.window_end, window_end = $3, "
	                   "position_xid = NULL, position_id = NULL") +
	       GroupAt(4) + " AND pg_snapshot_xmax(g.window_end) <= '1'::xid8 RETURNING g.ctid";
}

std::string EmitSql(std::string_view queue_table)
{
	return "SELECT q.msg_id, $2::int4, q.enqueued_at, $3::timestamptz, $4::timestamptz, q.message, q.headers FROM " +
	       QualifiedTable(queue_table) +
	       " AS q WHERE q.msg_id = ANY ($1) ORDER BY q.xid, q.msg_id";
}

std::string RenewLeaseSql()
{
	return std::string("UPDATE pgmq.consumer_groups AS g SET leases = (SELECT jsonb_agg(CASE WHEN (e.l ->> 'b')::int8 = $3 "
	                   "THEN e.l || jsonb_build_object('vt', $4::float8, 'n', (e.l ->> 'n')::int + 1) ELSE e.l END "
	                   "ORDER BY e.o) FROM jsonb_array_elements(g.leases) WITH ORDINALITY AS e(l, o)), "
	                   "last_read_at = $5") +
	       GroupAt(6) + " RETURNING (SELECT (l.value ->> 'n')::int FROM jsonb_array_elements(g.leases) AS l "
	                    "WHERE (l.value ->> 'b')::int8 = $3), g.ctid";
}

std::string AckSql()
{
	return std::string("WITH held AS (SELECT DISTINCT (i.v)::int8 AS msg_id FROM pgmq.consumer_groups AS g, "
	                   "jsonb_array_elements(g.leases) AS l, jsonb_array_elements(l.value -> 'ids') AS i(v)") +
	       GroupAt(5) + " AND (i.v)::int8 = ANY ($3)), done AS (UPDATE pgmq.consumer_groups AS g SET leases = coalesce(("
	                  "SELECT jsonb_agg(jsonb_set(e.l, '{ids}', k.ids) ORDER BY e.o) FROM jsonb_array_elements(g.leases) "
	                  "WITH ORDINALITY AS e(l, o), LATERAL (SELECT coalesce(jsonb_agg(i.v ORDER BY i.p), '[]') AS ids "
	                  "FROM jsonb_array_elements(e.l -> 'ids') WITH ORDINALITY AS i(v, p) WHERE (i.v)::int8 <> ALL ($3)) "
	                  "AS k WHERE jsonb_array_length(k.ids) > 0), '[]'), last_ack_at = $4" +
	       GroupAt(5) + " AND EXISTS (SELECT FROM held) RETURNING g.ctid) "
	                    "SELECT h.msg_id, (SELECT d.ctid FROM done AS d) FROM held AS h ORDER BY h.msg_id";
}

std::string ReleaseSql()
{
	// The lease holding $3, as in AckSql; an ordered group's lease stays
	// whole (its messages come back together, in order).
	const std::string holds = "(l.value -> 'ids') @> to_jsonb($3::int8)";
	return std::string("WITH held AS (SELECT (l.value ->> 'n')::int AS n FROM pgmq.consumer_groups AS g, "
	                   "jsonb_array_elements(g.leases) AS l") +
	       GroupAt(5) + " AND " + holds + " LIMIT 1) UPDATE pgmq.consumer_groups AS g SET leases = CASE WHEN g.ordered "
	       "THEN (SELECT jsonb_agg(CASE WHEN " + holds + " THEN l.value || jsonb_build_object('vt', $4::float8) ELSE "
	       "l.value END ORDER BY l.o) FROM jsonb_array_elements(g.leases) WITH ORDINALITY AS l(value, o)) "
	       "ELSE coalesce((SELECT jsonb_agg(k.l ORDER BY k.o) FROM (SELECT jsonb_set(l.value, '{ids}', coalesce(("
	       "SELECT jsonb_agg(i.v ORDER BY i.p) FROM jsonb_array_elements(l.value -> 'ids') WITH ORDINALITY AS "
	       "i(v, p) WHERE (i.v)::int8 <> $3), '[]')) AS l, l.o FROM jsonb_array_elements(g.leases) WITH ORDINALITY "
	       "AS l(value, o)) AS k WHERE jsonb_array_length(k.l -> 'ids') > 0), '[]') || jsonb_build_array("
	       "jsonb_build_object('b', g.next_batch, 'ids', jsonb_build_array($3), 'vt', $4::float8, 'n', "
	       "(SELECT n FROM held))) END, next_batch = g.next_batch + CASE WHEN g.ordered THEN 0 ELSE 1 END" +
	       GroupAt(5) + " AND EXISTS (SELECT FROM held) RETURNING g.ctid";
}

std::string LeaseOfSql()
{
	return std::string("SELECT (l.value ->> 'n')::int FROM pgmq.consumer_groups AS g, jsonb_array_elements(g.leases) AS l") +
	       GroupAt(4) + " AND l.value -> 'ids' @> to_jsonb($3::int8) LIMIT 1";
}

std::string SetAsideSql(std::string_view queue_table, std::string_view dead_letter_table)
{
	const std::string headers = FailureAppendedSql("m.headers", "$5::text", "$4::timestamptz", "$6::int");
	const std::string why = "jsonb_build_object('stream', $2::text, 'group', $3::text, 'msg_id', m.msg_id, "
	                        "'read_ct', $6::int, 'enqueued_at', m.enqueued_at, 'moved_at', $4::timestamptz, "
	                        "'reason', $5::text)";
	const std::string key = std::string("'") + kStreamDeadLetterHeader + "'";
	return "INSERT INTO " + QualifiedTable(dead_letter_table) + " (vt, message, headers) SELECT $4, m.message, "
	       "CASE WHEN jsonb_typeof(h.h) = 'object' THEN h.h || jsonb_build_object(" + key + ", " + why +
	       ") ELSE jsonb_build_object(" + key + ", " + why + " || jsonb_build_object('headers', h.h)) END FROM " +
	       QualifiedTable(queue_table) + " AS m, LATERAL (SELECT " + headers +
	       " AS h) AS h WHERE m.msg_id = ANY ($1) ORDER BY m.xid, m.msg_id RETURNING msg_id";
}

std::string GroupsSql()
{
	return "SELECT g.stream_name::text, g.group_name::text, (SELECT coalesce(sum("
	       "jsonb_array_length(l.value -> 'ids')), 0) FROM jsonb_array_elements(g.leases) AS l "
	       "WHERE (l.value ->> 'vt')::float8 > $2)::int8, g.last_read_at, "
	       "g.last_ack_at, g.ordered, g.dead_letter_queue::text, g.max_deliveries, g.subscribed_at "
	       "FROM pgmq.consumer_groups AS g WHERE $1::text IS NULL OR g.stream_name = $1 ORDER BY 1, 2";
}

std::string GroupBacklogSql(std::string_view queue_table)
{
	const std::string q = QualifiedTable(queue_table);
	// Not given yet: after the window's start and not up to the position.
	// Given in a lease that ran out: pending again.
	return "SELECT n.c + x.c, CASE WHEN n.oldest IS NULL OR x.oldest < n.oldest THEN x.oldest ELSE n.oldest END, "
	       "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_inherits AS i JOIN pg_class AS c "
	       "ON c.oid = i.inhrelid, LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), "
	       "'TO \\(''(\\d+)''\\)$') AS m) AS b WHERE i.inhparent = $3 "
	       "AND (b.m IS NULL OR b.m[1]::xid8 > pg_snapshot_xmin(g.window_start)))::int8 "
	       "FROM pgmq.consumer_groups AS g, LATERAL (SELECT count(*) AS c, min(q.enqueued_at) AS oldest FROM " + q +
	       " AS q WHERE q.xid >= pg_snapshot_xmin(g.window_start) AND NOT pg_visible_in_snapshot(q.xid, "
	       "g.window_start) AND NOT (g.position_xid IS NOT NULL AND pg_visible_in_snapshot(q.xid, g.window_end) AND "
	       "(q.xid, q.msg_id) <= (g.position_xid, g.position_id)) AND " + kFloors +
	       ") AS n, LATERAL (SELECT count(*) AS c, min(q.enqueued_at) AS oldest FROM " + q +
	       " AS q WHERE q.msg_id = ANY (ARRAY(SELECT (i.v)::int8 FROM jsonb_array_elements(g.leases) AS l, "
	       "jsonb_array_elements(l.value -> 'ids') AS i(v) WHERE (l.value ->> 'vt')::float8 <= $4))) AS x" + kGroupIs;
}

std::string ClearLeasesSql()
{
	return "UPDATE pgmq.consumer_groups AS g SET leases = '[]' WHERE g.stream_name = $1 AND g.leases <> '[]'";
}

std::string NewestInRangeSql(std::string_view queue_table)
{
	return "SELECT q.enqueued_at FROM " + QualifiedTable(queue_table) +
	       " AS q WHERE q.xid >= $1::xid8 AND q.xid < $2::xid8 ORDER BY q.xid DESC, q.msg_id DESC LIMIT 1";
}

}  // namespace pgmq::core
