// test/unit/fifo_test.cpp
// FIFO group reads of the core (pgmq/core/fifo.hpp): the group key
// expression the index and the statements share, the group index's name and
// DDL, and the three strategies' statements (locking, parameters, delivery
// order). What the statements do to rows is tested against a server
// (sql/fifo*.sql, test/isolation/specs/fifo_concurrent.spec).
#include <cstddef>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"
#include "pgmq/core/fifo.hpp"

#include "core_error_assert.hpp"
#include "sql_lexer.hpp"

using pgmq_test::QuotesBalanced;
using pgmq_test::ThrowsCoreError;
using pgmq::core::ErrorKind;
using pgmq::core::GroupRead;
using pgmq::core::GroupReadSql;

namespace {

bool Contains(const std::string &haystack, const std::string &needle) { return haystack.find(needle) != std::string::npos; }

std::size_t Count(const std::string &haystack, const std::string &needle)
{
	std::size_t n = 0;
	for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1))
		n++;
	return n;
}

constexpr GroupRead kAll[] = {GroupRead::Batch, GroupRead::RoundRobin, GroupRead::Head};

}  // namespace

// ------------------------------------------------------------ group key

TEST(GroupKeyExpression, HeaderWithDefaultGroupCollatedC)
{
	EXPECT_EQ(pgmq::core::GroupKeyExpression("q"),
	          "(COALESCE(q.headers OPERATOR(pg_catalog.->>) 'x-pgmq-group', '_default_fifo_group') COLLATE "
	          "pg_catalog.\"C\")");
}

TEST(GroupKeyExpression, NoAliasForTheIndex)
{
	// CREATE INDEX names the column bare; the statements qualify it.
	EXPECT_TRUE(Contains(pgmq::core::GroupKeyExpression(""), "(COALESCE(headers OPERATOR"));
}

// ------------------------------------------------------------ group index

TEST(WriteGroupIndexName, AppendsUpstreamsSuffix)
{
	char out[64];
	pgmq::core::WriteGroupIndexName("q_orders", out, sizeof out);
	EXPECT_STREQ(out, "q_orders_fifo_idx");
}

TEST(WriteGroupIndexName, LongestTableThatStillFits)
{
	char out[64];
	const std::string table(54, 'x');  // 54 + 9 = 63 bytes, the identifier limit
	pgmq::core::WriteGroupIndexName(table, out, sizeof out);
	EXPECT_EQ(std::string(out), table + "_fifo_idx");
}

TEST(WriteGroupIndexName, TooLongForAnIdentifier)
{
	char out[128];
	EXPECT_TRUE(ThrowsCoreError([&] { pgmq::core::WriteGroupIndexName(std::string(55, 'x'), out, sizeof out); },
	                            ErrorKind::NameTooLong, "queue name is too long for its FIFO index name"));
}

TEST(WriteGroupIndexName, NeverWritesPastTheBuffer)
{
	char out[8] = {'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u'};
	EXPECT_TRUE(ThrowsCoreError([&] { pgmq::core::WriteGroupIndexName("q_x", out, sizeof out); },
	                            ErrorKind::NameTooLong, "queue name is too long for its FIFO index name"));
	EXPECT_EQ(std::string(out, sizeof out), "uuuuuuuu");
}

TEST(CreateGroupIndexSql, BtreeOnGroupKeyThenMsgId)
{
	const std::string sql = pgmq::core::CreateGroupIndexSql("q_orders");
	EXPECT_EQ(sql, "CREATE INDEX IF NOT EXISTS \"q_orders_fifo_idx\" ON pgmq.\"q_orders\" (" +
	                   pgmq::core::GroupKeyExpression("") + ", msg_id)");
}

TEST(CreateGroupIndexSql, QuotesHostileNames)
{
	const std::string sql = pgmq::core::CreateGroupIndexSql("q_a\"; DROP TABLE t; --");
	EXPECT_TRUE(QuotesBalanced(sql)) << sql;
	EXPECT_TRUE(Contains(sql, "pgmq.\"q_a\"\"; DROP TABLE t; --\"")) << sql;
}

TEST(CreateGroupIndexSql, TooLongTableIsAnError)
{
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::CreateGroupIndexSql(std::string(60, 'x')); }, ErrorKind::NameTooLong,
	                            "queue name is too long for its FIFO index name"));
}

// ------------------------------------------------------------ group reads

TEST(GroupReadSql, SixDifferentStatements)
{
	std::set<std::string> texts;
	for (GroupRead kind : kAll)
		for (bool indexed : {false, true})
			texts.insert(GroupReadSql(kind, indexed, "q_orders"));
	EXPECT_EQ(texts.size(), 6u);
}

TEST(GroupReadSql, ParametersAreNowVtAndQtyOnly)
{
	for (GroupRead kind : kAll)
		for (bool indexed : {false, true}) {
			const std::string sql = GroupReadSql(kind, indexed, "q_orders");
			EXPECT_TRUE(Contains(sql, "$1")) << sql;
			EXPECT_TRUE(Contains(sql, "$2")) << sql;
			EXPECT_TRUE(Contains(sql, "$3")) << sql;
			EXPECT_FALSE(Contains(sql, "$4")) << sql;
			EXPECT_TRUE(QuotesBalanced(sql)) << sql;
		}
}

TEST(GroupReadSql, HeadsAreLockedSkippingHeldOnes)
{
	for (GroupRead kind : kAll)
		for (bool indexed : {false, true})
			EXPECT_TRUE(Contains(GroupReadSql(kind, indexed, "q_orders"), "FOR UPDATE OF h SKIP LOCKED"));
}

TEST(GroupReadSql, RunsLockTheirOtherRowsButHeadReadsHaveNone)
{
	EXPECT_TRUE(Contains(GroupReadSql(GroupRead::Batch, false, "q_orders"), "FOR UPDATE OF q SKIP LOCKED"));
	EXPECT_TRUE(Contains(GroupReadSql(GroupRead::RoundRobin, false, "q_orders"), "FOR UPDATE OF q SKIP LOCKED"));
	EXPECT_FALSE(Contains(GroupReadSql(GroupRead::Head, false, "q_orders"), "FOR UPDATE OF q"));
}

TEST(GroupReadSql, IndexedFindsHeadsByLooseIndexScan)
{
	const std::string scan = GroupReadSql(GroupRead::Batch, false, "q_orders");
	const std::string indexed = GroupReadSql(GroupRead::Batch, true, "q_orders");
	EXPECT_TRUE(Contains(scan, "SELECT DISTINCT ON ("));
	EXPECT_FALSE(Contains(scan, "UNION ALL"));
	EXPECT_TRUE(Contains(indexed, "UNION ALL"));
	EXPECT_TRUE(Contains(indexed, "CROSS JOIN LATERAL"));
	EXPECT_FALSE(Contains(indexed, "DISTINCT ON"));
}

TEST(GroupReadSql, DeliveryOrderPerStrategy)
{
	EXPECT_TRUE(Contains(GroupReadSql(GroupRead::Batch, false, "q_orders"), "ORDER BY u.head, u.pos"));
	EXPECT_TRUE(Contains(GroupReadSql(GroupRead::RoundRobin, false, "q_orders"), "ORDER BY u.pos, u.head"));
	const std::string head = GroupReadSql(GroupRead::Head, false, "q_orders");
	EXPECT_EQ(head.substr(head.size() - std::string("ORDER BY u.head").size()), "ORDER BY u.head");
}

TEST(GroupReadSql, ClaimSetsVtAndCountsTheRead)
{
	for (GroupRead kind : kAll) {
		const std::string sql = GroupReadSql(kind, false, "q_orders");
		EXPECT_EQ(Count(sql, "UPDATE pgmq.\"q_orders\" AS q SET vt = $2"), 1u) << sql;
		EXPECT_TRUE(Contains(sql, "read_ct = q.read_ct OPERATOR(pg_catalog.+) 1")) << sql;
		EXPECT_TRUE(Contains(sql, "last_read_at = $1")) << sql;
	}
}

TEST(GroupReadSql, UnknownStrategyIsAnInternalError)
{
	EXPECT_TRUE(ThrowsCoreError([] { GroupReadSql(static_cast<GroupRead>(99), false, "q_orders"); },
	                            ErrorKind::Internal, "unknown group read"));
}
