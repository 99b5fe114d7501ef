#include <gtest/gtest.h>

#include "pgmq/console/api_error.hpp"
#include "pgmq/console/queries.hpp"

using namespace pgmq::console;

TEST(ConsoleQueries, IdentifiersAreAlwaysQuoted)
{
	EXPECT_EQ(QuoteIdentifier("q_jobs"), "\"q_jobs\"");
	EXPECT_EQ(QuoteIdentifier("q_a\"b"), "\"q_a\"\"b\"");
	EXPECT_EQ(QuoteIdentifier("q_x; DROP TABLE t"), "\"q_x; DROP TABLE t\"");
}

TEST(ConsoleQueries, DepthIsOneStatementForAnyNumberOfQueues)
{
	std::vector<std::string> tables;
	for (int i = 0; i < 1000; ++i)
		tables.push_back("q_" + std::to_string(i));
	std::string sql = DepthSql(tables);
	EXPECT_EQ(sql.find(';'), std::string::npos);
	std::size_t unions = 0;
	for (auto at = sql.find("UNION ALL"); at != std::string::npos; at = sql.find("UNION ALL", at + 1))
		++unions;
	EXPECT_EQ(unions, 999u);
	EXPECT_NE(sql.find("SELECT 999, "), std::string::npos);
	EXPECT_NE(sql.find("pgmq.\"q_999\""), std::string::npos);
}

TEST(ConsoleQueries, TheCatalogAsksTheExtensionsRuleAndDuplicatesNone)
{
	const std::string catalog = CatalogSql(CatalogShape{});
	EXPECT_NE(catalog.find("pgmq._tables_running_foreign_code("), std::string::npos);
	EXPECT_NE(catalog.find("'refused', q.refused"), std::string::npos);
	EXPECT_NE(catalog.find("q.may_read AND rq.reason IS NULL AS readable"), std::string::npos);
	EXPECT_EQ(catalog.find("$2"), std::string::npos);  // the rule locks: no list of locked tables
	// The rule is pgmq's: no check of its own on row security or column types.
	// (Which tables are streams is told by a column's type, as pgmq tells it:
	// StreamGroupsAreAskedOnlyOfReadableStreams; left out here.)
	CatalogShape no_streams;
	no_streams.streams = false;
	const std::string rule_part = CatalogSql(no_streams);
	for (const char *own : {"relrowsecurity", "atttypid", "16384", "pg_has_role"}) {
		EXPECT_EQ(rule_part.find(own), std::string::npos) << own;
		EXPECT_EQ(std::string(kCountersSql).find(own), std::string::npos) << own;
	}
}

TEST(ConsoleQueries, WithoutTheRuleTheOwnerRuleJudgesLockedTables)
{
	CatalogShape upstream{false, false, false, false, false, false};
	const std::string catalog = CatalogSql(upstream);
	// Nothing only pgmq-cpp has is called.
	for (const char *missing : {"_tables_running_foreign_code", "pgmq.policies", "list_policies", "partition_status"})
		EXPECT_EQ(catalog.find(missing), std::string::npos) << missing;
	EXPECT_NE(catalog.find("NULL::boolean AS paused"), std::string::npos);
	EXPECT_NE(catalog.find("'policies', NULL::json"), std::string::npos);
	// Only the tables locked beforehand, their owners and every table a read
	// reaches (pg_inherits) judged, attributes membership does not pass on
	// compared.
	EXPECT_NE(catalog.find("c.oid = ANY($2::oid[])"), std::string::npos);
	EXPECT_NE(catalog.find("a.oid = ANY($2::oid[])"), std::string::npos);
	EXPECT_NE(catalog.find("pg_inherits"), std::string::npos);
	EXPECT_NE(catalog.find("pg_has_role(o.oid, me.oid, 'USAGE')"), std::string::npos);
	for (const char *attribute : {"rolsuper", "rolcreaterole", "rolcreatedb", "rolbypassrls", "rolreplication"})
		EXPECT_NE(catalog.find(std::string("o.") + attribute + " OR NOT me." + attribute), std::string::npos)
			<< attribute;
	EXPECT_NE(catalog.find("'owner' AS kind"), std::string::npos);
	EXPECT_EQ(std::string(kLockableSql).find("LOCK"), std::string::npos);  // the caller locks what it lists

	CatalogShape trusted = upstream;
	trusted.trust_owners = true;
	const std::string trusting = CatalogSql(trusted);
	EXPECT_EQ(trusting.find("pg_has_role"), std::string::npos);
	EXPECT_NE(trusting.find("c.oid = ANY($2::oid[])"), std::string::npos);  // still only what was locked
}

TEST(ConsoleQueries, StreamGroupsAreAskedOnlyOfReadableStreams)
{
	const std::string catalog = CatalogSql(CatalogShape{});
	// Which queues are streams: the table, as pgmq tells (an xid8 column xid
	// of a partitioned table), not pgmq.streams' stream_relid, which the
	// row's owner may point elsewhere.
	EXPECT_NE(catalog.find("sa.atttypid = 'pg_catalog.xid8'::regtype"), std::string::npos);
	const std::size_t typed = catalog.find("atttypid");
	EXPECT_EQ(catalog.find("atttypid", typed + 1), std::string::npos);  // only there
	EXPECT_EQ(catalog.find("stream_relid"), std::string::npos);
	// stream_groups reads the stream's table: once, behind the rule's verdict,
	// in a lateral kept apart from the join.
	const std::size_t call = catalog.find("pgmq.stream_groups(q.queue_name)");
	ASSERT_NE(call, std::string::npos);
	EXPECT_EQ(catalog.find("pgmq.stream_groups(", call + 1), std::string::npos);
	EXPECT_NE(catalog.find("WHERE q.readable AND st.is_stream OFFSET 0", call), std::string::npos);
	EXPECT_EQ(catalog.find("stream_partitions"), std::string::npos);  // a stream's page asks for those

	CatalogShape older;
	older.streams = false;
	const std::string without = CatalogSql(older);
	for (const char *missing : {"pgmq.streams", "stream_groups("})
		EXPECT_EQ(without.find(missing), std::string::npos) << missing;
	EXPECT_NE(without.find("'stream', NULL::boolean"), std::string::npos);
}

TEST(ConsoleQueries, QueueTablesByEitherLowercasing)
{
	// This extension lowercases ASCII only; upstream by the database's locale.
	for (const std::string &sql : {CatalogSql(CatalogShape{}), std::string(kCountersSql), std::string(kLockableSql)}) {
		EXPECT_NE(sql.find("lower(l.queue_name COLLATE \"C\")"), std::string::npos) << sql;
		EXPECT_NE(sql.find("lower(l.queue_name))))"), std::string::npos) << sql;  // coalesce's second choice
	}
}

TEST(ConsoleQueries, MessagesPageByCursorInTheOrderAsked)
{
	std::string newest = MessagesSql("q_jobs", MessageSource::kQueue, true);
	EXPECT_NE(newest.find("msg_id < $1::bigint"), std::string::npos);
	EXPECT_NE(newest.find("ORDER BY msg_id DESC"), std::string::npos);
	EXPECT_NE(newest.find("FROM pgmq.\"q_jobs\""), std::string::npos);
	std::string oldest = MessagesSql("a_jobs", MessageSource::kArchive, false);
	EXPECT_NE(oldest.find("msg_id > $1::bigint"), std::string::npos);
	EXPECT_NE(oldest.find("archived_at"), std::string::npos);
	EXPECT_NE(oldest.find("NULL::timestamptz AS vt"), std::string::npos);
}

TEST(ConsoleQueries, SqlstatesMapToStatuses)
{
	EXPECT_EQ(HttpStatusForSqlstate("42501", false), 403);
	EXPECT_EQ(HttpStatusForSqlstate("25006", false), 403);
	EXPECT_EQ(HttpStatusForSqlstate("42P01", false), 404);
	EXPECT_EQ(HttpStatusForSqlstate("22P02", false), 400);
	EXPECT_EQ(HttpStatusForSqlstate("42601", false), 400);
	EXPECT_EQ(HttpStatusForSqlstate("55P03", false), 409);
	EXPECT_EQ(HttpStatusForSqlstate("57014", false), 504);
	EXPECT_EQ(HttpStatusForSqlstate("XX000", true), 503);
	EXPECT_EQ(HttpStatusForSqlstate("", false), 503);
	EXPECT_EQ(HttpStatusForSqlstate("XX000", false), 500);
}
