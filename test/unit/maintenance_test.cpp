// test/unit/maintenance_test.cpp
// Partition maintenance and recovery in the core (pgmq/core/maintenance.hpp)
// and the archive conversion's SQL (pgmq/core/partition.hpp): premaking and
// retention measured from the queue's sequence, when a recovery batch must
// hold the table, upstream's notices, and the statements (values as $n
// parameters, identifiers quoted, schema-qualified).
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"

#include "core_error_assert.hpp"
#include "sql_lexer.hpp"

using pgmq_test::QuotesBalanced;
using pgmq_test::ThrowsCoreError;
using pgmq_test::ThrowsCoreErrorKind;

namespace {

using pgmq::core::CoreError;
using pgmq::core::ErrorKind;
using pgmq::core::IdPosition;
using pgmq::core::PartitionKind;
using pgmq::core::PartitionPlan;
using Starts = std::vector<int64_t>;

IdPosition Position(int64_t step, int32_t premake, std::optional<int64_t> last_id,
                    std::optional<int64_t> oldest_queued = std::nullopt, std::optional<int64_t> default_max = std::nullopt)
{
	IdPosition position;
	position.step = step;
	position.premake = premake;
	position.last_id = last_id;
	position.oldest_queued = oldest_queued;
	position.default_max = default_max;
	return position;
}

// The $n placeholders of sql.
std::set<int> Params(std::string_view sql)
{
	std::set<int> found;
	for (std::size_t i = 0; i + 1 < sql.size(); i++) {
		if (sql[i] != '$' || sql[i + 1] < '0' || sql[i + 1] > '9')
			continue;
		int n = 0;
		std::size_t j = i + 1;
		while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9')
			n = n * 10 + (sql[j++] - '0');
		found.insert(n);
	}
	return found;
}

bool Contains(std::string_view sql, std::string_view part) { return sql.find(part) != std::string_view::npos; }

const PartitionPlan kById{PartitionKind::ById, "msg_id", "msg_id"};
const PartitionPlan kByTime{PartitionKind::ByTime, "enqueued_at", "archived_at"};

// ------------------------------------------------------------ PartitionStart

TEST(PartitionStart, AsPartmanComputesIt)
{
	EXPECT_EQ(pgmq::core::PartitionStart(0, 10), 0);
	EXPECT_EQ(pgmq::core::PartitionStart(9, 10), 0);
	EXPECT_EQ(pgmq::core::PartitionStart(10, 10), 10);
	EXPECT_EQ(pgmq::core::PartitionStart(149999, 10000), 140000);
	EXPECT_EQ(pgmq::core::PartitionStart(1, 1), 1);
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(PartitionStart, RoundsNegativeIdsDown)
{
	EXPECT_EQ(pgmq::core::PartitionStart(-5, 10), -10);
	EXPECT_EQ(pgmq::core::PartitionStart(-10, 10), -10);
	EXPECT_EQ(pgmq::core::PartitionStart(-11, 10), -20);
	EXPECT_EQ(pgmq::core::PartitionStart(-1, 1), -1);
}

TEST(PartitionStart, NeverOverflows)
{
	EXPECT_EQ(pgmq::core::PartitionStart(kMax, 10), kMax - 7);  // 9223372036854775800
	EXPECT_EQ(pgmq::core::PartitionStart(kMax, kMax), kMax);
	EXPECT_EQ(pgmq::core::PartitionStart(kMin, 2), kMin);           // a multiple of 2
	EXPECT_EQ(pgmq::core::PartitionStart(kMin, 10), kMin);          // the floor lies below: clamped
	EXPECT_EQ(pgmq::core::PartitionStart(kMin + 1, kMax), kMin + 1);  // -kMax
	EXPECT_EQ(pgmq::core::PartitionStart(kMin, kMax), kMin);          // the floor, -2 kMax, lies below
	EXPECT_EQ(pgmq::core::PartitionEnd(kMax - 17, 10), std::optional<int64_t>(kMax - 7));
	EXPECT_EQ(pgmq::core::PartitionEnd(kMax - 7, 10), std::nullopt);
}

// ------------------------------------------------------------- PremakeStarts

Starts Premake(const IdPosition &position, const Starts &existing = {})
{
	return pgmq::core::PremakeStarts(position, existing);
}

TEST(PremakeStarts, FreshQueueHasThePartitionsCreateParentMade)
{
	// create_partitioned(q, '10', ..., 2): p0, p10, p20, nothing to add.
	EXPECT_EQ(Premake(Position(10, 2, std::nullopt)), (Starts{0, 10, 20}));
	EXPECT_EQ(Premake(Position(10, 2, std::nullopt), Starts{0, 10, 20}), Starts{});
}

TEST(PremakeStarts, FromTheNewestIdEvenWhenTheQueueIsEmpty)
{
	// The drained queue of partition_drained.sh: 40 ids handed out, none left,
	// pg_partman made p0-p20 and nothing since.
	EXPECT_EQ(Premake(Position(10, 2, 40), Starts{0, 10, 20}), (Starts{40, 50, 60}));
	EXPECT_EQ(Premake(Position(10, 2, 39), Starts{0, 10, 20}), (Starts{30, 40, 50}));
	EXPECT_EQ(Premake(Position(10000, 4, 149999)), (Starts{140000, 150000, 160000, 170000, 180000}));
	// Only what is missing.
	EXPECT_EQ(Premake(Position(10, 2, 40), Starts{0, 10, 20, 40, 60}), (Starts{50}));
}

TEST(PremakeStarts, ArchiveAlsoCoversEveryMessageStillInTheQueue)
{
	// Any message of the queue may be archived: down to the oldest one.
	EXPECT_EQ(Premake(Position(10, 1, 55, 12), Starts{0, 10}), (Starts{20, 30, 40, 50, 60}));
	// An oldest message above the newest cannot happen, but must not widen.
	EXPECT_EQ(Premake(Position(10, 1, 55, 70)), (Starts{50, 60}));
}

TEST(PremakeStarts, NeverOverRowsInTheDefaultPartition)
{
	// Spilled ids up to 95: pg_partman cannot create p90 or below; from p100
	// on new messages get partitions again (premake counts from p90, the
	// partition of the newest id).
	EXPECT_EQ(Premake(Position(10, 2, 95, std::nullopt, 95), Starts{0, 10}), (Starts{100, 110}));
	EXPECT_EQ(Premake(Position(10, 3, 95, std::nullopt, 95)), (Starts{100, 110, 120}));
	// Everything wanted lies at or below the spill: nothing.
	EXPECT_EQ(Premake(Position(10, 1, 55, std::nullopt, 70)), Starts{});
	// An archive with a spill: the gap fill stops above it.
	EXPECT_EQ(Premake(Position(10, 2, 55, 3, 31)), (Starts{40, 50, 60, 70}));
}

TEST(PremakeStarts, BoundedPerRunNewestFirstThenTheRest)
{
	// An archive 5000 partitions behind its queue: the newest 100 first.
	const IdPosition position = Position(1, 4, 5000, 0);
	Starts existing;
	Starts first = Premake(position, existing);
	ASSERT_EQ(first.size(), pgmq::core::kMaxPremadePerRun);
	EXPECT_EQ(first.back(), 5004);
	EXPECT_EQ(first.front(), 5004 - static_cast<int64_t>(pgmq::core::kMaxPremadePerRun) + 1);
	// The next run continues below them, until the gap is filled.
	existing = first;
	const Starts second = Premake(position, existing);
	ASSERT_EQ(second.size(), pgmq::core::kMaxPremadePerRun);
	EXPECT_EQ(second.back(), first.front() - 1);
	std::size_t runs = 2;
	existing.insert(existing.begin(), second.begin(), second.end());
	for (Starts more = Premake(position, existing); !more.empty(); more = Premake(position, existing)) {
		existing.insert(existing.begin(), more.begin(), more.end());
		runs++;
	}
	EXPECT_EQ(existing.size(), 5005u);
	EXPECT_EQ(runs, 51u);
}

TEST(PremakeStarts, PremakeZeroIsJustTheNewestPartition)
{
	EXPECT_EQ(Premake(Position(10, 0, 15)), (Starts{10}));
}

TEST(PremakeStarts, BadStepIsABug)
{
	EXPECT_TRUE(ThrowsCoreError([] { Premake(Position(0, 2, 15)); }, ErrorKind::Internal,
	                            "partition step and premake must be positive"));
	EXPECT_TRUE(ThrowsCoreError([] { Premake(Position(-10, 2, 15)); }, ErrorKind::Internal,
	                            "partition step and premake must be positive"));
}

TEST(PremakeStarts, NearTheTopOfInt8UpToTheLastPartitionThatFits)
{
	// Newest id 9223372036854775707: its partition starts at ...700; premake
	// 20 would reach past INT64_MAX. The last partition whose end is an int8
	// starts at ...790 (it ends at ...800).
	const int64_t newest = kMax - 107;  // ...700
	Starts expected;
	for (int64_t start = newest; start <= kMax - 17; start += 10)
		expected.push_back(start);
	EXPECT_EQ(Premake(Position(10, 20, kMax - 100), {}), expected);
	// Nothing to make when the newest partition itself would not fit.
	EXPECT_TRUE(Premake(Position(10, 4, kMax), {}).empty());
	// Rows in the last partition there can be: nothing above them.
	EXPECT_TRUE(Premake(Position(10, 4, kMax - 100, std::nullopt, kMax - 10), {}).empty());
	// A huge step and premake: at most the one partition that fits.
	EXPECT_EQ(Premake(Position(kMax / 2, 1000, 5), {}), (Starts{0, kMax / 2}));
	EXPECT_TRUE(Premake(Position(10, 4, kMax - 100, std::nullopt, kMax - 3), {}).empty());
}

TEST(PremakeStarts, NegativeIdsDownToTheBottomOfInt8)
{
	// The archive's oldest queued message near INT64_MIN: the walk down stops
	// at the bottom instead of wrapping round.
	const int64_t step = kMax / 4;
	EXPECT_EQ(Premake(Position(step, 0, 0, kMin + 1), {}), (Starts{-4 * step, -3 * step, -2 * step, -step, 0}));
	EXPECT_EQ(Premake(Position(10, 0, -5), {}), (Starts{-10}));
}

// ------------------------------------------------------------ RetentionDrops

TEST(RetentionDrops, WhatPartmanWouldDropWereTheNewestMessageStillThere)
{
	// partman: drop when retention <= max - (start + step). max = 125,
	// retention 30: ends <= 95, so p0 .. p80.
	const Starts existing{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140};
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 125), 30, existing), (Starts{0, 10, 20, 30, 40, 50, 60, 70, 80}));
	// Exactly on the line: p90 ends at 100 = 130 - 30.
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 130), 30, existing).back(), 90);
}

TEST(RetentionDrops, ArchiveKeepsPartitionsAMessageOfTheQueueMayStillGoTo)
{
	const Starts existing{0, 10, 20, 30, 40, 50, 60};
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 60, 25), 10, existing), (Starts{0, 10}));
	// An empty queue (no oldest message) bounds nothing.
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 60), 10, existing), (Starts{0, 10, 20, 30, 40}));
}

TEST(RetentionDrops, NeverTheHighestPartitionNorWithoutIds)
{
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 1000), 10, Starts{0}), Starts{});
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 1000), 10, Starts{20, 0, 10}), (Starts{0, 10}));
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, std::nullopt), 10, Starts{0, 10, 20}), Starts{});
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 1000), 10, Starts{}), Starts{});
}

TEST(RetentionDrops, NothingBelowTheLine)
{
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, 50), 100, Starts{0, 10, 20, 30, 40, 50}), Starts{});
}

// ------------------------------------------------------------ BatchNeedsLock

TEST(RetentionDrops, NeverWrapsRoundInt8)
{
	// Retention reaching below INT64_MIN: no id is that old, nothing goes
	// (wrapping round, every partition but the highest would).
	EXPECT_TRUE(pgmq::core::RetentionDrops(Position(10, 2, kMin + 5), 100, {kMin, kMin + 10, kMin + 20}).empty());
	// A partition whose end is beyond INT64_MAX is never below the line.
	EXPECT_TRUE(pgmq::core::RetentionDrops(Position(10, 2, kMax), 0, {kMax - 5, kMax - 3}).empty());
	EXPECT_EQ(pgmq::core::RetentionDrops(Position(10, 2, kMax), 0, {kMax - 27, kMax - 17, kMax - 7}),
	          (Starts{kMax - 27, kMax - 17}));
}

TEST(BatchNeedsLock, NearTheTopOfInt8)
{
	EXPECT_TRUE(pgmq::core::BatchNeedsLock(kMax, kMax - 1, 10));
	EXPECT_FALSE(pgmq::core::BatchNeedsLock(kMax, 5, 10));
}

TEST(BatchNeedsLock, OnlyTheRangeNewMessagesStillGoTo)
{
	// Newest id 155, step 10: new messages get 156.. which is p150.
	EXPECT_TRUE(pgmq::core::BatchNeedsLock(155, 150, 10));
	EXPECT_TRUE(pgmq::core::BatchNeedsLock(155, 159, 10));
	EXPECT_FALSE(pgmq::core::BatchNeedsLock(155, 140, 10));
	EXPECT_FALSE(pgmq::core::BatchNeedsLock(160, 150, 10));  // p150 is full
	EXPECT_TRUE(pgmq::core::BatchNeedsLock(159, 150, 10));   // 159 may still be on its way to the default
	EXPECT_FALSE(pgmq::core::BatchNeedsLock(155, std::nullopt, 10));  // nothing to move
	EXPECT_TRUE(pgmq::core::BatchNeedsLock(std::nullopt, 0, 10));
}

// ------------------------------------------------------------------ messages

TEST(Messages, UpstreamsConvertNoticesWithTheirLiteralS)
{
	EXPECT_EQ(pgmq::core::AlreadyPartitionedNotice("a_foo"), "Table a_foos is already partitioned");
	EXPECT_EQ(pgmq::core::ArchiveMissingNotice("a_foo"), "Table a_foos does not exists");
}

TEST(Messages, OldArchiveNameMustBeAnIdentifier)
{
	EXPECT_EQ(pgmq::core::OldArchiveTable("a_foo"), "a_foo_old");
	EXPECT_EQ(pgmq::core::OldArchiveTable(std::string(59, 'x')), std::string(59, 'x') + "_old");
	EXPECT_TRUE(ThrowsCoreErrorKind([] { pgmq::core::OldArchiveTable(std::string(60, 'x')); }, ErrorKind::NameTooLong));
}

// ---------------------------------------------------------------- statements

TEST(Statements, ValuesAreParameters)
{
	EXPECT_TRUE(Params(pgmq::core::PartConfigSql("partman")).empty());
	EXPECT_TRUE(Params(pgmq::core::QueueNamesSql()).empty());
	EXPECT_EQ(Params(pgmq::core::TableGrantsSql()), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::RunPartmanMaintenanceSql("partman")), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::IdPositionSql("q_x", "a_x", true, true)), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::IdPartitionsSql()), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::CreateIdPartitionsSql("partman", 4)), (std::set<int>{1, 2}));
	EXPECT_EQ(Params(pgmq::core::CreateIdPartitionsSql("partman", 5)), (std::set<int>{1, 2}));
	EXPECT_EQ(Params(pgmq::core::MoveOutOfDefaultSql("partman", PartitionKind::ById)), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::MoveFromTableSql("partman", PartitionKind::ByTime)), (std::set<int>{1, 2}));
	EXPECT_EQ(Params(pgmq::core::NextBatchSql("q_x")), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::SetLocalLockTimeoutSql()), (std::set<int>{1}));
	EXPECT_EQ(Params(pgmq::core::RelationExistsSql()), (std::set<int>{1}));
	EXPECT_TRUE(Params(pgmq::core::TryPartmanMaintenanceLockSql()).empty());
}

TEST(Statements, PartmanSchemaIsQuotedAndDiscovered)
{
	for (const std::string &sql :
	     {pgmq::core::PartConfigSql("my partman"), pgmq::core::RunPartmanMaintenanceSql("my partman"),
	      pgmq::core::CreateIdPartitionsSql("my partman", 4), pgmq::core::MoveOutOfDefaultSql("my partman", PartitionKind::ById),
	      pgmq::core::MoveFromTableSql("my partman", PartitionKind::ById)}) {
		EXPECT_TRUE(Contains(sql, "\"my partman\".")) << sql;
		EXPECT_TRUE(QuotesBalanced(sql)) << sql;
	}
}

TEST(Statements, PartmanCallShapes)
{
	EXPECT_TRUE(Contains(pgmq::core::CreateIdPartitionsSql("partman", 4), "p_analyze := false"));
	EXPECT_FALSE(Contains(pgmq::core::CreateIdPartitionsSql("partman", 5), "p_analyze"));
	EXPECT_TRUE(Contains(pgmq::core::MoveOutOfDefaultSql("partman", PartitionKind::ById), ".partition_data_id($1, p_batch_count := 1"));
	EXPECT_TRUE(Contains(pgmq::core::MoveOutOfDefaultSql("partman", PartitionKind::ByTime), ".partition_data_time($1"));
	EXPECT_TRUE(Contains(pgmq::core::MoveFromTableSql("partman", PartitionKind::ById), "p_source_table := $2"));
}

TEST(Statements, TablesAreQuotedInSchemaPgmq)
{
	const std::string evil = "q_x\"; DROP TABLE t; --";
	for (const std::string &sql :
	     {pgmq::core::IdPositionSql(evil, evil, true, true), pgmq::core::PartitionIsEmptySql(evil),
	      pgmq::core::DropPartitionSql(evil), pgmq::core::DefaultHasRowsSql(evil), pgmq::core::CreatePartmanMoveTableSql(evil), pgmq::core::AnalyzeSql(evil),
	      pgmq::core::NextBatchSql(evil), pgmq::core::LockTableShareSql(evil), pgmq::core::DropTableSql(evil),
	      pgmq::core::RenameTableSql(evil, evil), pgmq::core::CreateConvertedArchiveSql(evil, evil, kById)}) {
		EXPECT_TRUE(Contains(sql, "pgmq.\"q_x\"\"; DROP TABLE t; --")) << sql;
		EXPECT_TRUE(QuotesBalanced(sql)) << sql;
	}
}

TEST(Statements, IdPositionAsksOnlyWhatTheTableNeeds)
{
	const std::string queue = pgmq::core::IdPositionSql("q_x", "q_x", false, false);
	EXPECT_FALSE(Contains(queue, "min(msg_id)"));
	EXPECT_FALSE(Contains(queue, "_default"));
	const std::string archive = pgmq::core::IdPositionSql("q_x", "a_x", true, true);
	EXPECT_TRUE(Contains(archive, "pg_catalog.min(msg_id) FROM pgmq.\"q_x\""));
	EXPECT_TRUE(Contains(archive, "pg_catalog.max(msg_id) FROM ONLY pgmq.\"a_x_default\""));
}

TEST(Statements, ConvertedArchive)
{
	const std::string by_id = pgmq::core::CreateConvertedArchiveSql("a_x", "a_x_old", kById);
	EXPECT_TRUE(Contains(by_id, "CREATE TABLE pgmq.\"a_x\" (LIKE pgmq.\"a_x_old\""));
	EXPECT_TRUE(Contains(by_id, "PARTITION BY RANGE (\"msg_id\")"));
	EXPECT_FALSE(Contains(by_id, "INCLUDING ALL"));  // its indexes are built after the move
	EXPECT_TRUE(Contains(pgmq::core::CreateConvertedArchiveSql("a_x", "a_x_old", kByTime), "PARTITION BY RANGE (\"archived_at\")"));
	// The key must contain the partition column: by msg_id only. The archive
	// index is named after the name as given, as upstream names it.
	const auto id_indexes = pgmq::core::ConvertedArchiveIndexStatements("My Q", kById);
	ASSERT_EQ(id_indexes.size(), 2u);
	EXPECT_EQ(id_indexes[0], "ALTER TABLE pgmq.\"a_my q\" ADD PRIMARY KEY (msg_id)");
	EXPECT_EQ(id_indexes[1], "CREATE INDEX \"archived_at_idx_My Q\" ON pgmq.\"a_my q\" (archived_at)");
	EXPECT_EQ(pgmq::core::ConvertedArchiveIndexStatements("x", kByTime).size(), 1u);
}

TEST(Statements, PartConfigReadsNoQueueTableAndCallsNothingInPgmq)
{
	const std::string sql = pgmq::core::PartConfigSql("partman");
	EXPECT_TRUE(Contains(sql, "automatic_maintenance OPERATOR(pg_catalog.=) 'on'"));
	EXPECT_TRUE(Contains(sql, "NOT c.undo_in_progress"));
	// A bad row in pgmq.meta made format_table_name fail the whole listing.
	EXPECT_FALSE(Contains(sql, "pgmq.format_table_name"));
	EXPECT_FALSE(Contains(pgmq::core::QueueNamesSql(), "format_table_name"));
}

TEST(Statements, MaintenanceTriesPartmansLockInsteadOfWaiting)
{
	EXPECT_TRUE(Contains(pgmq::core::TryPartmanMaintenanceLockSql(), "pg_try_advisory_xact_lock"));
}

TEST(Statements, PartitionsComeWithTheirSchemaOwnerAndBothBounds)
{
	const std::string sql = pgmq::core::IdPartitionsSql();
	EXPECT_TRUE(Contains(sql, "nspname OPERATOR(pg_catalog.=) 'pgmq'"));
	EXPECT_TRUE(Contains(sql, "relowner OPERATOR(pg_catalog.=) p.relowner"));
	EXPECT_TRUE(Contains(sql, " TO \\("));
	EXPECT_TRUE(QuotesBalanced(sql));
}

TEST(IsPartmanIdPartition, AlignedAndOneIntervalWide)
{
	EXPECT_TRUE(pgmq::core::IsPartmanIdPartition(10, 20, 10));
	EXPECT_TRUE(pgmq::core::IsPartmanIdPartition(-10, 0, 10));
	EXPECT_FALSE(pgmq::core::IsPartmanIdPartition(10, 30, 10));  // attached with other bounds
	EXPECT_FALSE(pgmq::core::IsPartmanIdPartition(5, 15, 10));
	EXPECT_FALSE(pgmq::core::IsPartmanIdPartition(kMax - 7, kMax, 10));
	EXPECT_FALSE(pgmq::core::IsPartmanIdPartition(0, 10, 0));
}

TEST(Statements, GrantsCarriedOver)
{
	EXPECT_EQ(pgmq::core::GrantSql("a_x", "SELECT", std::string("app"), false), "GRANT SELECT ON pgmq.\"a_x\" TO \"app\"");
	EXPECT_EQ(pgmq::core::GrantSql("a_x", "INSERT", std::nullopt, true),
	          "GRANT INSERT ON pgmq.\"a_x\" TO PUBLIC WITH GRANT OPTION");
	EXPECT_EQ(pgmq::core::GrantSql("a_x", "DELETE", std::string("we\"ird"), false), "GRANT DELETE ON pgmq.\"a_x\" TO \"we\"\"ird\"");
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::GrantSql("a_x", "SELECT; DROP TABLE t", std::nullopt, false); },
	                            ErrorKind::Internal, "not a table privilege: SELECT; DROP TABLE t"));
	EXPECT_TRUE(Contains(pgmq::core::TableGrantsSql(), "aclexplode"));
}

}  // namespace
