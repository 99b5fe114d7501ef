// console/src/queries.cpp
#include "pgmq/console/queries.hpp"

namespace pgmq::console {

// Which queue tables the console reads is the extension's own rule
// (docs/permissions.md, "Whose code a queue's table may run"): any queue
// owner can shape its table, and a table that would run its owner's code
// (a view, a foreign partition, a trigger, a row-security policy, an index
// predicate the planner folds, a column of its own type, ...) with the
// console's rights is listed as refused, with pgmq's reason, and never
// read. pgmq._tables_running_foreign_code asks the rule for every table in
// one statement, and locks each one it checks until the end of the
// transaction (ACCESS SHARE): the overview's later statement in the same
// transaction reads what was checked, as no code can be attached meanwhile.
//
// may_read: a table (the shape pgmq reads; the rule refuses views too),
// with SELECT on it and on its msg_id sequence, which pgmq.metrics needs
// (grant_queue_access gives both); readable: that, and not refused. Only
// then are its metrics asked for. Partitions only when pg_partman's schema
// and part_config are readable too (pgmq.partition_status reads them). A
// lateral's WHERE on the outer row is a one-time filter, so the function is
// not called at all for the other queues, as long as the lateral is not
// pulled up into the join (OFFSET 0, or an aggregate, keeps it apart).
// paused comes from the queue's row of pgmq.policies (readable by every
// role; list_queues has upstream's columns only), when that row was written
// for this table and not left by a dropped one of the same name.
const char kCatalogSql[] = R"SQL(
WITH listed AS (
  SELECT l.queue_name, l.is_partitioned, l.is_unlogged, pol.paused_at IS NOT NULL AS paused, c.oid AS relid, c.relname,
         ARRAY(SELECT p.queue_name::text FROM pgmq.policies AS p WHERE p.dead_letter_queue = l.queue_name
                ORDER BY 1) AS dead_letter_for,
         a.oid AS archive_relid, a.relname AS archive_relname,
         c.oid IS NOT NULL AND c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, 'SELECT')
           AND coalesce(has_sequence_privilege(pg_get_serial_sequence(format('pgmq.%I', c.relname), 'msg_id'),
                                               'SELECT'), false) AS may_read,
         a.oid IS NOT NULL AND a.relkind IN ('r', 'p') AND has_table_privilege(a.oid, 'SELECT') AS archive_may_read
    FROM pgmq.list_queues() AS l
    LEFT JOIN pg_class AS c
      ON c.oid = to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name COLLATE "C")))
    LEFT JOIN pg_class AS a
      ON a.oid = to_regclass(format('pgmq.%I', 'a_' || lower(l.queue_name COLLATE "C")))
    LEFT JOIN pgmq.policies AS pol ON pol.queue_name = l.queue_name AND pol.queue_relid::oid = c.oid
   WHERE $1::text IS NULL OR l.queue_name = $1::text
), refused AS (
  SELECT r.relation::oid AS relid, r.reason
    FROM pgmq._tables_running_foreign_code(ARRAY(
           SELECT t.relid FROM listed AS q,
                  LATERAL (VALUES (CASE WHEN q.may_read THEN q.relid END),
                                  (CASE WHEN q.archive_may_read THEN q.archive_relid END)) AS t(relid)
            WHERE t.relid IS NOT NULL)::regclass[]) AS r
), queues AS (
  SELECT q.*, rq.reason AS refused, ra.reason AS archive_refused,
         q.may_read AND rq.reason IS NULL AS readable,
         q.archive_may_read AND ra.reason IS NULL AS archive_readable
    FROM listed AS q
    LEFT JOIN refused AS rq ON rq.relid = q.relid
    LEFT JOIN refused AS ra ON ra.relid = q.archive_relid
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
         'readable', q.readable, 'refused', q.refused, 'archive_refused', q.archive_refused,
         'metrics', to_json(m), 'policies', to_json(p), 'partitions', s.partitions)::text
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
// a plain table: then the table's own counters. Statistics counters only:
// no statement on the tables, so no table's code runs.
const char kCountersSql[] = R"SQL(
SELECT l.queue_name, c.oid::bigint,
       (SELECT coalesce(sum(pg_stat_get_tuples_inserted(t.relid)), pg_stat_get_tuples_inserted(c.oid))::bigint
          FROM pg_partition_tree(c.oid) AS t),
       (SELECT coalesce(sum(pg_stat_get_tuples_updated(t.relid)), pg_stat_get_tuples_updated(c.oid))::bigint
          FROM pg_partition_tree(c.oid) AS t)
  FROM pgmq.list_queues() AS l
  JOIN pg_class AS c ON c.oid = to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name COLLATE "C")))
 WHERE c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, 'SELECT')
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
