// test/unit/streams_test.cpp
// A stream's partition widths and names, and the DDL and SQL of streams
// (streams.hpp): table names quoted, values only as parameters.
#include "pgmq/core/streams.hpp"

#include <string>

#include <gtest/gtest.h>

#include "sql_lexer.hpp"

namespace {

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

TEST(StreamPartitions, WidthFollowsTheRate)
{
	using pgmq::core::NextPartitionXids;
	// 100 ids a second, partitions of an hour: 360,000 ids.
	EXPECT_EQ(NextPartitionXids(6000, 60, 3600), 360000);
	// Bounded below and above.
	EXPECT_EQ(NextPartitionXids(1, 3600, 60), 1000);
	EXPECT_EQ(NextPartitionXids(1000000000, 1, 86400), 1000000000);
	// Nothing measured yet: the first width.
	EXPECT_EQ(NextPartitionXids(0, 60, 3600), pgmq::core::kFirstPartitionXids);
	EXPECT_EQ(NextPartitionXids(500, 0, 3600), pgmq::core::kFirstPartitionXids);
}

TEST(StreamPartitions, CoverAQuarterOfTheRetention)
{
	using pgmq::core::SecondsPerPartition;
	EXPECT_DOUBLE_EQ(SecondsPerPartition(86400), 21600);
	EXPECT_DOUBLE_EQ(SecondsPerPartition(0), 60);
	EXPECT_DOUBLE_EQ(SecondsPerPartition(30 * 86400), 86400);
}

TEST(StreamPartitions, NamesAndBounds)
{
	EXPECT_EQ(pgmq::core::StreamPartitionName("q_orders", 12), "q_orders_p12");
	EXPECT_EQ(pgmq::core::StreamDefaultPartitionName("q_orders"), "q_orders_default");
	const auto statements = pgmq::core::CreateStreamPartitionStatements("q_orders", "q_orders_p2", 700, 10700);
	ASSERT_EQ(statements.size(), 2u);
	EXPECT_EQ(statements[0], "CREATE TABLE pgmq.\"q_orders_p2\" (LIKE pgmq.\"q_orders\" INCLUDING DEFAULTS)");
	EXPECT_EQ(statements[1],
	          "ALTER TABLE pgmq.\"q_orders\" ATTACH PARTITION pgmq.\"q_orders_p2\" FOR VALUES FROM ('700') TO ('10700')");
}

TEST(StreamSql, TableNamesAreQuoted)
{
	const std::string odd = "q_we\"ird";
	for (const std::string &sql :
	     {pgmq::core::WindowMessagesSql(odd, false), pgmq::core::WindowMessagesSql(odd, true), pgmq::core::EmitSql(odd),
	      pgmq::core::SetAsideSql(odd, "q_dead"), pgmq::core::GroupBacklogSql(odd),
	      pgmq::core::PartitionReclaimableSql(odd), pgmq::core::DefaultPartitionCleanupSql(odd)}) {
		EXPECT_TRUE(Contains(sql, "pgmq.\"q_we\"\"ird\"")) << sql;
		EXPECT_TRUE(pgmq_test::QuotesBalanced(sql)) << sql;
	}
	for (const std::string &statement : pgmq::core::CreateStreamStatements(odd, "a_we\"ird"))
		EXPECT_TRUE(pgmq_test::QuotesBalanced(statement)) << statement;
}

TEST(StreamSql, WindowsAreCutBySnapshotsAndReadInKeyOrder)
{
	const std::string current = pgmq::core::WindowMessagesSql("q_s", false);
	EXPECT_TRUE(Contains(current, "pg_visible_in_snapshot(q.xid, g.window_end) AND NOT pg_visible_in_snapshot(q.xid, "
	                              "g.window_start)"))
		<< current;
	EXPECT_TRUE(Contains(current, "(q.xid, q.msg_id) > (coalesce(g.position_xid, pg_snapshot_xmin(g.window_start)), "
	                              "coalesce(g.position_id, 0))"))
		<< current;
	EXPECT_TRUE(Contains(current, "ORDER BY q.xid, q.msg_id LIMIT $3")) << current;
	const std::string cut = pgmq::core::WindowMessagesSql("q_s", true);
	EXPECT_TRUE(Contains(cut, "pg_current_snapshot() AS cut")) << cut;
	EXPECT_TRUE(Contains(cut, "pg_visible_in_snapshot(q.xid, s.cut) AND NOT pg_visible_in_snapshot(q.xid, g.window_end)"))
		<< cut;
}

// The invariant of group_row.hpp: every statement that takes a location
// selects the group's row by it AND by the group's key, never by either
// alone; the by-key statements select by the key only.
TEST(StreamSql, AGroupsRowIsSelectedByLocationAndKey)
{
	const auto count = [](const std::string &sql, const std::string &what) {
		size_t n = 0;
		for (size_t at = sql.find(what); at != std::string::npos; at = sql.find(what, at + 1))
			n++;
		return n;
	};
	for (const std::string &sql :
	     {pgmq::core::LockGroupSql(false), pgmq::core::GroupStateSql(false), pgmq::core::WindowMessagesSql("q_s", false),
	      pgmq::core::WindowMessagesSql("q_s", true), pgmq::core::RecordLeaseSql(), pgmq::core::AnchorSql(),
	      pgmq::core::RenewLeaseSql(), pgmq::core::AckSql(), pgmq::core::ReleaseSql(), pgmq::core::LeaseOfSql()}) {
		const size_t rows = count(sql, "pgmq.consumer_groups AS g");
		EXPECT_GT(rows, 0u) << sql;
		EXPECT_EQ(count(sql, " AND g.stream_name = $1 AND g.group_name = $2"), rows) << sql;
		EXPECT_EQ(count(sql, "WHERE g.ctid = $"), rows) << sql;
	}
	for (const std::string &sql : {pgmq::core::LockGroupSql(true), pgmq::core::GroupStateSql(true)}) {
		EXPECT_EQ(count(sql, "g.ctid = "), 0u) << sql;
		EXPECT_EQ(count(sql, " WHERE g.stream_name = $1 AND g.group_name = $2"), 1u) << sql;
	}
}

}  // namespace
