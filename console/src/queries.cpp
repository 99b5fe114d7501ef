// console/src/queries.cpp
#include "pgmq/console/queries.hpp"

namespace pgmq::console {

// A table the console reads: a plain or partitioned table whose partitions
// are tables (a view would run its owner's query as the console's role, a
// foreign table its wrapper), with no row security applying
// to the role (a policy's function would run as the console's role), whose
// columns are all of built-in types (a tenant's type could bring an
// implicit cast or operator that the console's comparisons would call).
// Any queue owner can shape their own queue table; these rules keep a
// console run by a stronger role from running that owner's code.
#define PGMQ_CONSOLE_SAFE_TABLE(rel)                                                                           \
	"(" rel ".relkind IN ('r', 'p') AND (NOT " rel ".relrowsecurity OR (SELECT rolsuper OR rolbypassrls FROM "    \
	"pg_roles WHERE rolname = current_user)) AND NOT EXISTS (SELECT FROM pg_attribute AS t WHERE t.attrelid = " \
	rel ".oid AND t.attnum > 0 AND NOT t.attisdropped AND t.atttypid >= 16384) AND NOT EXISTS (SELECT FROM "      \
	"pg_partition_tree(" rel ".oid) AS pt JOIN pg_class AS x ON x.oid = pt.relid WHERE x.relkind NOT IN ('r', 'p')))"

// readable: a safe table, and SELECT on it and on its msg_id sequence,
// which pgmq.metrics needs (grant_queue_access gives both); only then are
// its metrics asked for. Partitions only when pg_partman's schema and
// part_config are readable too (pgmq.partition_status reads them). A
// lateral's WHERE on the outer row is a one-time filter, so the function is
// not called at all for the other queues, as long as the lateral is not
// pulled up into the join (OFFSET 0, or an aggregate, keeps it apart).
// paused comes from the queue's row of pgmq.policies (readable by every
// role; list_queues has upstream's columns only), when that row was written
// for this table and not left by a dropped one of the same name.
const char kCatalogSql[] = R"SQL(
WITH queues AS (
  SELECT l.queue_name, l.is_partitioned, l.is_unlogged, pol.paused_at IS NOT NULL AS paused, c.oid AS relid, c.relname,
         ARRAY(SELECT p.queue_name::text FROM pgmq.policies AS p WHERE p.dead_letter_queue = l.queue_name
                ORDER BY 1) AS dead_letter_for,
         a.relname AS archive_relname,
         c.oid IS NOT NULL AND )SQL" PGMQ_CONSOLE_SAFE_TABLE("c") R"SQL( AND has_table_privilege(c.oid, 'SELECT')
           AND coalesce(has_sequence_privilege(pg_get_serial_sequence(format('pgmq.%I', c.relname), 'msg_id'),
                                               'SELECT'), false) AS readable,
         a.oid IS NOT NULL AND )SQL" PGMQ_CONSOLE_SAFE_TABLE("a") R"SQL( AND has_table_privilege(a.oid, 'SELECT')
           AS archive_readable
    FROM pgmq.list_queues() AS l
    LEFT JOIN pg_class AS c
      ON c.oid = to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name COLLATE "C")))
    LEFT JOIN pg_class AS a
      ON a.oid = to_regclass(format('pgmq.%I', 'a_' || lower(l.queue_name COLLATE "C")))
    LEFT JOIN pgmq.policies AS pol ON pol.queue_name = l.queue_name AND pol.queue_relid::oid = c.oid
   WHERE $1::text IS NULL OR l.queue_name = $1::text
), partman AS (
  SELECT bool_or(has_schema_privilege(n.oid, 'USAGE')
                 AND has_table_privilege(format('%I.part_config', n.nspname), 'SELECT')) AS usable
    FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
   WHERE e.extname = 'pg_partman'
)
SELECT json_build_object(
         'name', q.queue_name, 'partitioned', q.is_partitioned, 'unlogged', q.is_unlogged,
         'paused', q.paused, 'dead_letter_for', q.dead_letter_for, 'relid', q.relid, 'relname', q.relname,
         'archive_relname', CASE WHEN q.archive_readable THEN q.archive_relname END,
         'readable', q.readable, 'metrics', to_json(m), 'policies', to_json(p), 'partitions', s.partitions)::text
  FROM queues AS q
  LEFT JOIN LATERAL (SELECT * FROM pgmq.metrics(q.queue_name) WHERE q.readable OFFSET 0) AS m ON true
  LEFT JOIN pgmq.list_policies() AS p ON p.queue_name = q.queue_name
  LEFT JOIN LATERAL (
    SELECT coalesce(json_agg(st ORDER BY st.parent_table), '[]') AS partitions
      FROM pgmq.partition_status(q.queue_name) AS st
     WHERE q.is_partitioned AND q.readable AND coalesce((SELECT usable FROM partman), false)
  ) AS s ON q.is_partitioned AND q.readable AND coalesce((SELECT usable FROM partman), false)
 ORDER BY q.queue_name
)SQL";

// pg_partition_tree lists a partitioned table's partitions, and nothing for
// a plain table: then the table's own counters.
const char kCountersSql[] = R"SQL(
SELECT l.queue_name, c.oid::bigint,
       (SELECT coalesce(sum(pg_stat_get_tuples_inserted(t.relid)), pg_stat_get_tuples_inserted(c.oid))::bigint
          FROM pg_partition_tree(c.oid) AS t),
       (SELECT coalesce(sum(pg_stat_get_tuples_updated(t.relid)), pg_stat_get_tuples_updated(c.oid))::bigint
          FROM pg_partition_tree(c.oid) AS t)
  FROM pgmq.list_queues() AS l
  JOIN pg_class AS c ON c.oid = to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name COLLATE "C")))
 WHERE )SQL" PGMQ_CONSOLE_SAFE_TABLE("c") R"SQL( AND has_table_privilege(c.oid, 'SELECT')
)SQL";

const char kSessionSql[] = "SELECT current_user, current_database(), current_setting('server_version')";

std::string QuoteIdentifier(const std::string &name)
{
	std::string quoted = "\"";
	for (char c : name) {
		if (c == '"')
			quoted += '"';
		quoted += c;
	}
	return quoted + "\"";
}

std::string DepthSql(const std::vector<std::string> &relnames)
{
	std::string sql;
	for (std::size_t i = 0; i < relnames.size(); ++i) {
		if (i > 0)
			sql += "\nUNION ALL ";
		sql += "SELECT " + std::to_string(i) +
			   ", count(*) FILTER (WHERE vt <= now()), count(*) FILTER (WHERE vt > now() AND read_ct > 0),"
			   " count(*) FILTER (WHERE vt > now() AND read_ct = 0),"
			   " extract(epoch FROM now() - min(enqueued_at) FILTER (WHERE vt <= now()))::float8 FROM pgmq." +
			   QuoteIdentifier(relnames[i]);
	}
	return sql;
}

std::string MessagesSql(const std::string &relname, MessageSource source, bool newest_first)
{
	bool archive = source == MessageSource::kArchive;
	std::string order = newest_first ? "DESC" : "ASC";
	return std::string("SELECT coalesce(json_agg(r ORDER BY r.msg_id ") + order + "), '[]')::text FROM (" +
		   "SELECT msg_id, read_ct, enqueued_at, " + (archive ? "NULL::timestamptz AS vt, archived_at" :
																 "vt, NULL::timestamptz AS archived_at") +
		   ", message, headers FROM pgmq." + QuoteIdentifier(relname) +
		   " WHERE ($1::bigint IS NULL OR msg_id " + (newest_first ? "<" : ">") + " $1::bigint)" +
		   " AND ($2::jsonb IS NULL OR headers @> $2::jsonb)" +
		   " AND ($3::jsonpath IS NULL OR message @? $3::jsonpath)" +
		   " AND ($5::text IS NULL OR headers -> 'x-pgmq-dead-letter' ->> 'queue' = $5::text)" +
		   " ORDER BY msg_id " + order + " LIMIT $4::int) AS r";
}

}  // namespace pgmq::console
