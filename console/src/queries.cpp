// console/src/queries.cpp
#include "pgmq/console/queries.hpp"

#include "pgmq/console/stream_queries.hpp"

namespace pgmq::console {

// Which queue tables the console reads is the extension's own rule when the
// database has it (docs/permissions.md, "Whose code a queue's table may
// run"): any queue owner can shape its table, and a table that would run its
// owner's code (a view, a foreign partition, a trigger, a row-security
// policy, an index predicate the planner folds, a column of its own type,
// ...) with the console's rights is listed as refused, with pgmq's reason,
// and never read. pgmq._tables_running_foreign_code asks the rule for every
// table in one statement, and locks each one it checks until the end of the
// transaction (ACCESS SHARE): the overview's later statement in the same
// transaction reads what was checked, as no code can be attached meanwhile.
//
// Without the rule (upstream pgmq) the console cannot tell what code a
// table carries, so it reads a table only when that code, whatever it is,
// could do nothing its owner cannot already do: the table, and every table
// a read of it reaches (partitions, inheritance children), is a plain or
// partitioned table owned by the console's role or by a role that has all
// its privileges (a member that inherits them) and at least its SUPERUSER,
// CREATEROLE, CREATEDB, BYPASSRLS and REPLICATION attributes, which
// membership does not pass on. Only the owner, or a role with the owner's privileges, can
// attach code to a table, or change its owner, or attach partitions, so the
// owner is the one to judge. The tables were locked (LOCK TABLE ONLY, of
// those kLockableSql lists) before this statement, so none can be dropped
// and replaced under its name by another role's table before the
// transaction's later statements read it ($2: the locked tables' oids).
// --trust-queue-owners (shape.trust_owners) reads every table the role may.
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
// for this table and not left by a dropped one of the same name. A queue's
// table is q_ and its name lowercased: in ASCII by this extension, by the
// database's locale by upstream (the first that exists).
namespace {

// The queue's table (prefix q_ or a_) by either lowercasing.
std::string TableOf(const char *prefix, const char *name)
{
	return std::string("coalesce(to_regclass(format('pgmq.%I', '") + prefix + "' || lower(" + name +
		   " COLLATE \"C\"))), to_regclass(format('pgmq.%I', '" + prefix + "' || lower(" + name + "))))";
}

// The owner rule's verdict on a relation c owned by o, for the role me.
const char kOwnerVerdict[] = R"SQL(
         CASE WHEN c.relkind NOT IN ('r', 'p')
              THEN format('%s, which a read of it reaches, is not a table', c.oid::regclass)
              WHEN NOT (o.oid = me.oid OR (pg_has_role(o.oid, me.oid, 'USAGE')
                          AND (o.rolsuper OR NOT me.rolsuper) AND (o.rolcreaterole OR NOT me.rolcreaterole)
                          AND (o.rolcreatedb OR NOT me.rolcreatedb) AND (o.rolbypassrls OR NOT me.rolbypassrls)
                          AND (o.rolreplication OR NOT me.rolreplication)))
              THEN format('%s is owned by role %I, which does not have the privileges of role %I',
                          c.oid::regclass, o.rolname, me.rolname) END)SQL";

}  // namespace

std::string CatalogSql(const CatalogShape &shape)
{
	const bool owner_rule = !shape.table_rule && !shape.trust_owners;
	std::string sql = "WITH RECURSIVE listed AS (\n  SELECT l.queue_name, l.is_partitioned, l.is_unlogged, ";
	sql += shape.pause ? "pol.paused_at IS NOT NULL" : "NULL::boolean";
	sql += " AS paused, c.oid AS relid, c.relname,\n         ";
	sql += shape.policies ? "ARRAY(SELECT p.queue_name::text FROM pgmq.policies AS p WHERE p.dead_letter_queue = "
							"l.queue_name ORDER BY 1)"
						  : "NULL::text[]";
	sql += R"SQL( AS dead_letter_for,
         a.oid AS archive_relid, a.relname AS archive_relname,
         c.oid IS NOT NULL AND c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, 'SELECT')
           AND coalesce(has_sequence_privilege(pg_get_serial_sequence(format('pgmq.%I', c.relname), 'msg_id'),
                                               'SELECT'), false))SQL";
	if (!shape.table_rule)
		sql += " AND c.oid = ANY($2::oid[])";
	sql += " AS may_read,\n         a.oid IS NOT NULL AND a.relkind IN ('r', 'p') AND has_table_privilege(a.oid, "
		   "'SELECT')";
	if (!shape.table_rule)
		sql += " AND a.oid = ANY($2::oid[])";
	sql += " AS archive_may_read\n    FROM pgmq.list_queues() AS l\n    LEFT JOIN pg_class AS c ON c.oid = " +
		   TableOf("q_", "l.queue_name") + "\n    LEFT JOIN pg_class AS a ON a.oid = " + TableOf("a_", "l.queue_name");
	if (shape.pause)
		sql += "\n    LEFT JOIN pgmq.policies AS pol ON pol.queue_name = l.queue_name AND pol.queue_relid::oid = c.oid";
	sql += "\n   WHERE $1::text IS NULL OR l.queue_name = $1::text\n), candidates AS (\n"
		   "  SELECT t.relid FROM listed AS q,\n"
		   "         LATERAL (VALUES (CASE WHEN q.may_read THEN q.relid END),\n"
		   "                         (CASE WHEN q.archive_may_read THEN q.archive_relid END)) AS t(relid)\n"
		   "   WHERE t.relid IS NOT NULL\n), refused AS (\n";
	if (shape.table_rule) {
		sql += "  SELECT r.relation::oid AS relid, r.reason, 'code' AS kind\n"
			   "    FROM pgmq._tables_running_foreign_code(ARRAY(SELECT relid FROM candidates)::regclass[]) AS r\n";
	} else if (owner_rule) {
		// Every relation a read of the table reaches: it, and its
		// partitions and inheritance children (pg_inherits, recursively).
		sql += std::string("  SELECT tree.root AS relid, min(") + kOwnerVerdict +
			   R"SQL() AS reason, 'owner' AS kind
    FROM tree JOIN pg_class AS c ON c.oid = tree.relid JOIN pg_roles AS o ON o.oid = c.relowner,
         (SELECT * FROM pg_roles WHERE rolname = current_user) AS me
   GROUP BY tree.root
), tree (root, relid) AS (
  SELECT relid, relid FROM candidates
  UNION ALL
  SELECT tree.root, i.inhrelid FROM tree JOIN pg_inherits AS i ON i.inhparent = tree.relid
))SQL";
	} else {
		sql += "  SELECT NULL::oid AS relid, NULL::text AS reason, NULL::text AS kind WHERE false\n";
	}
	if (!owner_rule)
		sql += ")";
	sql += R"SQL(, queues AS (
  SELECT q.*, rq.reason AS refused, rq.kind AS refused_kind, ra.reason AS archive_refused,
         ra.kind AS archive_refused_kind,
         q.may_read AND rq.reason IS NULL AS readable,
         q.archive_may_read AND ra.reason IS NULL AS archive_readable
    FROM listed AS q
    LEFT JOIN refused AS rq ON rq.relid = q.relid AND rq.reason IS NOT NULL
    LEFT JOIN refused AS ra ON ra.relid = q.archive_relid AND ra.reason IS NOT NULL
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
         'readable', q.readable, 'refused', q.refused, 'refused_kind', q.refused_kind,
         'archive_refused', q.archive_refused, 'archive_refused_kind', q.archive_refused_kind,
         'metrics', to_json(m), 'policies', )SQL";
	sql += shape.policies ? "to_json(p)" : "NULL::json";
	sql += ", 'partitions', ";
	sql += shape.partition_status ? "s.partitions" : "NULL::json";
	sql += ", ";
	sql += shape.streams ? kStreamCatalogFields : "'stream', NULL::boolean, 'stream_groups', NULL::json";
	sql += R"SQL()::text
  FROM queues AS q
  LEFT JOIN LATERAL (SELECT * FROM pgmq.metrics(q.queue_name) WHERE q.readable OFFSET 0) AS m ON true)SQL";
	if (shape.policies)
		sql += "\n  LEFT JOIN pgmq.list_policies() AS p ON p.queue_name = q.queue_name";
	if (shape.partition_status)
		sql += R"SQL(
  LEFT JOIN LATERAL (
    SELECT coalesce(json_agg(st ORDER BY st.parent_table), '[]') AS partitions
      FROM pgmq.partition_status(q.queue_name) AS st
     WHERE q.is_partitioned AND q.readable AND coalesce((SELECT usable FROM partman), false)
  ) AS s ON q.is_partitioned AND q.readable AND coalesce((SELECT usable FROM partman), false))SQL";
	if (shape.streams)
		sql += StreamCatalogJoin();
	sql += "\n ORDER BY q.queue_name\n";
	return sql;
}

// The tables the owner rule may judge, to be locked first (LOCK TABLE runs no
// code of theirs): each queue's table and archive the role may read.
const char kLockableSql[] = R"SQL(
SELECT c.oid, format('pgmq.%I', c.relname)
  FROM pgmq.list_queues() AS l, LATERAL (VALUES ('q_'), ('a_')) AS p(prefix), pg_class AS c
 WHERE c.oid = coalesce(to_regclass(format('pgmq.%I', p.prefix || lower(l.queue_name COLLATE "C"))),
                        to_regclass(format('pgmq.%I', p.prefix || lower(l.queue_name))))
   AND c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, 'SELECT')
   AND ($1::text IS NULL OR l.queue_name = $1::text)
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
  JOIN pg_class AS c ON c.oid = coalesce(to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name COLLATE "C"))),
                                         to_regclass(format('pgmq.%I', 'q_' || lower(l.queue_name))))
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
