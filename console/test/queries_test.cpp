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
	const std::string catalog = kCatalogSql;
	EXPECT_NE(catalog.find("pgmq._tables_running_foreign_code("), std::string::npos);
	EXPECT_NE(catalog.find("'refused', q.refused"), std::string::npos);
	EXPECT_NE(catalog.find("q.may_read AND rq.reason IS NULL AS readable"), std::string::npos);
	// The rule is pgmq's: no check of its own on row security or column types.
	for (const char *own : {"relrowsecurity", "atttypid", "16384"}) {
		EXPECT_EQ(catalog.find(own), std::string::npos) << own;
		EXPECT_EQ(std::string(kCountersSql).find(own), std::string::npos) << own;
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
