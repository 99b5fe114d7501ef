// test/unit/partition_test.cpp
// Partitioned-queue rules and SQL of the core (pgmq/core/partition.hpp):
// the choice of partition columns and
// its errors, the partitioned-name rule, and the statements handed to SPI
// and pg_partman (values as $n parameters, identifiers quoted, the call
// shape of partman 4.x and 5.x).
#include <climits>
#include <cmath>
#include <limits>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"
#include "pgmq/core/partition.hpp"

#include "core_error_assert.hpp"
#include "sql_lexer.hpp"

using pgmq_test::QuotesBalanced;
using pgmq_test::ThrowsCoreError;
using pgmq_test::ThrowsCoreErrorKind;

namespace {

using pgmq::core::CoreError;
using pgmq::core::ErrorKind;
using pgmq::core::PartitionKind;
using pgmq::core::PartitionPlan;

// The $n placeholders of sql, as numbers.
std::set<int> Params(std::string_view sql)
{
	std::set<int> found;
	for (std::size_t i = 0; i < sql.size(); i++) {
		if (sql[i] != '$' || i + 1 >= sql.size() || sql[i + 1] < '0' || sql[i + 1] > '9')
			continue;
		int n = 0;
		std::size_t j = i + 1;
		while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9')
			n = n * 10 + (sql[j++] - '0');
		found.insert(n);
	}
	return found;
}

std::set<int> Range(int n)
{
	std::set<int> out;
	for (int i = 1; i <= n; i++)
		out.insert(i);
	return out;
}

// Whether word occurs in sql outside double quotes (an unquoted identifier).
bool OccursUnquoted(std::string_view sql, std::string_view word)
{
	bool quoted = false;
	for (std::size_t i = 0; i < sql.size(); i++) {
		if (sql[i] == '"')
			quoted = !quoted;  // a doubled quote flips twice: still right
		else if (!quoted && sql.substr(i, word.size()) == word)
			return true;
	}
	return false;
}

bool Contains(std::string_view sql, std::string_view part) { return sql.find(part) != std::string_view::npos; }

const PartitionPlan kById{PartitionKind::ById, "msg_id", "msg_id"};
const PartitionPlan kByTime{PartitionKind::ByTime, "enqueued_at", "archived_at"};

// --------------------------------------------------------- PlanPartitioning

TEST(PlanPartitioning, IntegersPartitionByMsgId)
{
	const PartitionPlan plan = pgmq::core::PlanPartitioning("10000", "100000", 4);
	EXPECT_EQ(plan.kind, PartitionKind::ById);
	EXPECT_EQ(plan.queue_column, "msg_id");
	EXPECT_EQ(plan.archive_column, "msg_id");
	EXPECT_EQ(pgmq::core::PlanPartitioning(" 10 ", "+100", 1).kind, PartitionKind::ById);
	EXPECT_EQ(pgmq::core::PlanPartitioning("1", "1", pgmq::core::kMaxPremake).kind, PartitionKind::ById);
	EXPECT_EQ(pgmq::core::PlanPartitioning("2147483647", "2147483647", 1).kind, PartitionKind::ById);
}

TEST(PlanPartitioning, DurationsPartitionQueueByEnqueuedAtArchiveByArchivedAt)
{
	for (auto [interval, retention] : {std::pair{"1 day", "7 days"}, std::pair{"5 seconds", "10 seconds"},
	                                   std::pair{"daily", "1 week"}, std::pair{"1 hour", "P1D"}}) {
		const PartitionPlan plan = pgmq::core::PlanPartitioning(interval, retention, 4);
		EXPECT_EQ(plan.kind, PartitionKind::ByTime) << interval;
		EXPECT_EQ(plan.queue_column, "enqueued_at") << interval;
		EXPECT_EQ(plan.archive_column, "archived_at") << interval;
	}
}

TEST(PlanPartitioning, TextThatIsNoDurationIsLeftToTheIntervalCast)
{
	// The core decides only the kind; '' and 'abc' fail later, in the
	// server's interval input, with its own message.
	EXPECT_EQ(pgmq::core::PlanPartitioning("", "", 1).kind, PartitionKind::ByTime);
	EXPECT_EQ(pgmq::core::PlanPartitioning("1 day", "abc", 1).kind, PartitionKind::ByTime);
}

TEST(PlanPartitioning, MixedKindsAreAnError)
{
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "1 day", 4); }, ErrorKind::InvalidParameter,
	                            "partition_interval and retention_interval must be of the same kind: both integers (msg_id "
	                            "partitioning) or both durations (time partitioning), got '10' and '1 day'"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("1 day", "100", 4); }, ErrorKind::InvalidParameter,
	                            "partition_interval and retention_interval must be of the same kind: both integers (msg_id "
	                            "partitioning) or both durations (time partitioning), got '1 day' and '100'"));
	EXPECT_TRUE(ThrowsCoreErrorKind([] { pgmq::core::PlanPartitioning("daily", "7", 4); }, ErrorKind::InvalidParameter));
}

TEST(PlanPartitioning, PremakeBelowOne)
{
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "100", 0); }, ErrorKind::InvalidParameter,
	                            "premake must be at least 1, got 0"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("1 day", "7 days", -3); }, ErrorKind::InvalidParameter,
	                            "premake must be at least 1, got -3"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "100", INT32_MIN); }, ErrorKind::InvalidParameter,
	                            "premake must be at least 1, got -2147483648"));
	// premake is checked first, as upstream does.
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "1 day", 0); }, ErrorKind::InvalidParameter,
	                            "premake must be at least 1, got 0"));
}

TEST(PlanPartitioning, PremakeAboveTheLimit)
{
	EXPECT_NO_THROW(pgmq::core::PlanPartitioning("10", "100", pgmq::core::kMaxPremake));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "100", pgmq::core::kMaxPremake + 1); },
	                            ErrorKind::InvalidParameter, "premake must be at most 500, got 501"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("1 day", "7 days", INT32_MAX); }, ErrorKind::InvalidParameter,
	                            "premake must be at most 500, got 2147483647"));
}

TEST(PlanPartitioning, NonPositiveIntegers)
{
	const std::string message = "integer partition_interval and retention_interval must be positive";
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("0", "100", 4); }, ErrorKind::InvalidParameter, message));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("-10", "100", 4); }, ErrorKind::InvalidParameter, message));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "0", 4); }, ErrorKind::InvalidParameter, message));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", "-1", 4); }, ErrorKind::InvalidParameter, message));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("-2147483648", "-0", 4); }, ErrorKind::InvalidParameter, message));
}

TEST(PlanPartitioning, IntegersBeyondInt4AreAnErrorNotSeconds)
{
	// '3000000000'::interval would be 95 years of seconds: refused.
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("3000000000", "3000000000", 4); }, ErrorKind::InvalidParameter,
	                            "integer partition_interval '3000000000' is out of range (at most 2147483647)"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::PlanPartitioning("10", " 2147483648 ", 4); }, ErrorKind::InvalidParameter,
	                            "integer retention_interval ' 2147483648 ' is out of range (at most 2147483647)"));
	EXPECT_TRUE(ThrowsCoreErrorKind([] { pgmq::core::PlanPartitioning("-99999999999", "10", 4); }, ErrorKind::InvalidParameter));
}

// ------------------------------------------------ CheckPartitionedQueueName

TEST(CheckPartitionedQueueName, DotsAreRefused)
{
	const std::string message = "partitioned queue names cannot contain '.' (pg_partman splits schema.table on it)";
	for (const char *name : {"a.b", ".a", "a.", ".", "my.queue.name"})
		EXPECT_TRUE(ThrowsCoreError([name] { pgmq::core::CheckPartitionedQueueName(name); }, ErrorKind::InvalidName, message))
			<< name;
}

TEST(CheckPartitionedQueueName, OtherNamesPass)
{
	for (const char *name : {"a", "orders", "My_Queue", "my queue", "q\"x", "ü-name", "a_b_c"})
		EXPECT_NO_THROW(pgmq::core::CheckPartitionedQueueName(name)) << name;
}

// ------------------------------------------------------ CheckSameControl

TEST(CheckSameControl, SameColumnPasses)
{
	EXPECT_NO_THROW(pgmq::core::CheckSameControl("pgmq.q_x", "msg_id", "msg_id"));
	EXPECT_NO_THROW(pgmq::core::CheckSameControl("pgmq.a_x", "archived_at", "archived_at"));
}

TEST(CheckSameControl, OtherColumnIsAnError)
{
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::CheckSameControl("pgmq.q_x", "enqueued_at", "msg_id"); },
	                            ErrorKind::InvalidParameter,
	                            "pgmq.q_x is already partitioned by enqueued_at, not by msg_id: use the same kind of intervals as "
	                            "when the queue was created, or drop the queue first"));
}

// ------------------------------------------------ IntervalDuration, PartmanIntervalInput

TEST(IntervalDuration, FourXNamesAreTheirDurations)
{
	EXPECT_EQ(pgmq::core::IntervalDuration("yearly"), "1 year");
	EXPECT_EQ(pgmq::core::IntervalDuration("quarterly"), "3 months");
	EXPECT_EQ(pgmq::core::IntervalDuration("monthly"), "1 month");
	EXPECT_EQ(pgmq::core::IntervalDuration("weekly"), "1 week");
	EXPECT_EQ(pgmq::core::IntervalDuration("daily"), "1 day");
	EXPECT_EQ(pgmq::core::IntervalDuration("hourly"), "1 hour");
	EXPECT_EQ(pgmq::core::IntervalDuration("half-hour"), "30 minutes");
	EXPECT_EQ(pgmq::core::IntervalDuration("quarter-hour"), "15 minutes");
}

TEST(IntervalDuration, OtherTextIsKept)
{
	for (const char *text : {"Daily", " daily", "daily ", "1 day", "10", "", "minutely", "day"})
		EXPECT_EQ(pgmq::core::IntervalDuration(text), text) << "'" << text << "'";
}

TEST(PartmanIntervalInput, NamesAsTheyAreForFourXAsDurationsForFiveX)
{
	EXPECT_EQ(pgmq::core::PartmanIntervalInput("daily", 4), "daily");
	EXPECT_EQ(pgmq::core::PartmanIntervalInput("daily", 5), "1 day");
	EXPECT_EQ(pgmq::core::PartmanIntervalInput("2 days", 4), "2 days");
	EXPECT_EQ(pgmq::core::PartmanIntervalInput("2 days", 5), "2 days");
}

// ------------------------------------------------------------ DDL builders

TEST(PartitionDdl, QueueByMsgId)
{
	const std::string sql = pgmq::core::CreatePartitionedQueueSql("orders", kById, true);
	EXPECT_EQ(sql.rfind("CREATE TABLE IF NOT EXISTS pgmq.\"q_orders\" (", 0), 0u) << sql;
	EXPECT_TRUE(Contains(sql, "msg_id BIGINT GENERATED BY DEFAULT AS IDENTITY")) << sql;
	EXPECT_TRUE(Contains(sql, "PARTITION BY RANGE (\"msg_id\")")) << sql;
	EXPECT_FALSE(Contains(sql, "archived_at")) << sql;
	EXPECT_FALSE(Contains(sql, "PRIMARY KEY")) << sql;  // a key must include the partition column
	for (const char *column : {"read_ct INT DEFAULT 0 NOT NULL", "enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL",
	                           "last_read_at TIMESTAMP WITH TIME ZONE", "vt TIMESTAMP WITH TIME ZONE NOT NULL",
	                           "message pg_catalog.jsonb", "headers pg_catalog.jsonb"})
		EXPECT_TRUE(Contains(sql, column)) << column;
	EXPECT_TRUE(Params(sql).empty());
}

TEST(PartitionDdl, QueueByTime)
{
	const std::string sql = pgmq::core::CreatePartitionedQueueSql("orders", kByTime, true);
	EXPECT_TRUE(Contains(sql, "msg_id BIGINT GENERATED BY DEFAULT AS IDENTITY")) << sql;
	EXPECT_TRUE(Contains(sql, "PARTITION BY RANGE (\"enqueued_at\")")) << sql;
}

TEST(PartitionDdl, ArchiveByMsgIdAndByArchivedAt)
{
	const std::string by_id = pgmq::core::CreatePartitionedArchiveSql("orders", kById, true);
	EXPECT_EQ(by_id.rfind("CREATE TABLE IF NOT EXISTS pgmq.\"a_orders\" (", 0), 0u) << by_id;
	EXPECT_TRUE(Contains(by_id, "msg_id BIGINT NOT NULL")) << by_id;
	EXPECT_FALSE(Contains(by_id, "IDENTITY")) << by_id;  // ids come from the queue
	EXPECT_TRUE(Contains(by_id, "archived_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL")) << by_id;
	EXPECT_TRUE(Contains(by_id, "PARTITION BY RANGE (\"msg_id\")")) << by_id;
	const std::string by_time = pgmq::core::CreatePartitionedArchiveSql("orders", kByTime, true);
	EXPECT_TRUE(Contains(by_time, "PARTITION BY RANGE (\"archived_at\")")) << by_time;
}

TEST(PartitionDdl, NamesAreLowercasedAndQuoted)
{
	const std::string queue = pgmq::core::CreatePartitionedQueueSql("My Queue", kById, false);
	EXPECT_TRUE(Contains(queue, "pgmq.\"q_my queue\"")) << queue;
	const std::string archive = pgmq::core::CreatePartitionedArchiveSql("Evil\"; DROP TABLE x; --", kById, false);
	EXPECT_TRUE(Contains(archive, "pgmq.\"a_evil\"\"; drop table x; --\"")) << archive;
	EXPECT_TRUE(QuotesBalanced(archive)) << archive;
	EXPECT_FALSE(OccursUnquoted(archive, "DROP TABLE")) << archive;
}

TEST(PartitionDdl, IndexStatements)
{
	const auto by_id = pgmq::core::PartitionIndexStatements("Orders", kById, true, true);
	ASSERT_EQ(by_id.size(), 2u);
	EXPECT_EQ(by_id[0], "CREATE INDEX IF NOT EXISTS \"q_orders_part_idx\" ON pgmq.\"q_orders\" (\"msg_id\")");
	// The archive index keeps the name as given, as upstream's archived_at_idx_<name>.
	EXPECT_EQ(by_id[1], "CREATE INDEX IF NOT EXISTS \"archived_at_idx_Orders\" ON pgmq.\"a_orders\" (archived_at)");
	const auto by_time = pgmq::core::PartitionIndexStatements("orders", kByTime, true, true);
	ASSERT_EQ(by_time.size(), 2u);
	EXPECT_EQ(by_time[0], "CREATE INDEX IF NOT EXISTS \"q_orders_part_idx\" ON pgmq.\"q_orders\" (\"enqueued_at\")");
	EXPECT_EQ(by_time[1], "CREATE INDEX IF NOT EXISTS \"archived_at_idx_orders\" ON pgmq.\"a_orders\" (archived_at)");
	for (const std::string &sql : pgmq::core::PartitionIndexStatements("a\"b", kById, false, false))
		EXPECT_TRUE(QuotesBalanced(sql)) << sql;
}

TEST(PartitionDdl, PlainCreateForWhatDoesNotExistYet)
{
	// Only relations the adapter found (and checked) get IF NOT EXISTS.
	EXPECT_EQ(pgmq::core::CreatePartitionedQueueSql("orders", kById, false).rfind("CREATE TABLE pgmq.\"q_orders\" (", 0), 0u);
	EXPECT_EQ(pgmq::core::CreatePartitionedArchiveSql("orders", kById, false).rfind("CREATE TABLE pgmq.\"a_orders\" (", 0),
	          0u);
	const auto fresh = pgmq::core::PartitionIndexStatements("orders", kById, false, true);
	EXPECT_EQ(fresh[0], "CREATE INDEX \"q_orders_part_idx\" ON pgmq.\"q_orders\" (\"msg_id\")");
	EXPECT_EQ(fresh[1], "CREATE INDEX IF NOT EXISTS \"archived_at_idx_orders\" ON pgmq.\"a_orders\" (archived_at)");
}

TEST(PartmanParentName, UnquotedLowercaseTable)
{
	EXPECT_EQ(pgmq::core::PartmanParentName("q_orders"), "pgmq.q_orders");
	EXPECT_EQ(pgmq::core::PartmanParentName("a_my queue"), "pgmq.a_my queue");
}

// -------------------------------------------------------- partman builders

TEST(CreateParentSql, FourXIsNative)
{
	const std::string sql = pgmq::core::CreateParentSql("partman", 4);
	EXPECT_EQ(sql, "SELECT \"partman\".create_parent(p_parent_table := $1, p_control := $2, p_interval := $3, "
	               "p_premake := $4, p_type := 'native')");
	EXPECT_EQ(Params(sql), Range(4));
	EXPECT_FALSE(Contains(pgmq::core::CreateParentSql("partman", 0), "'range'"));  // unknown version: the 4.x shape
}

TEST(CreateParentSql, FiveXIsRange)
{
	for (int major : {5, 6}) {
		const std::string sql = pgmq::core::CreateParentSql("partman", major);
		EXPECT_TRUE(Contains(sql, "p_type := 'range'")) << sql;
		EXPECT_FALSE(Contains(sql, "native")) << sql;
		EXPECT_EQ(Params(sql), Range(4));
	}
}

TEST(CreateParentSql, SchemaIsDiscoveredAndQuoted)
{
	const std::string sql = pgmq::core::CreateParentSql("My \"Partman\"", 4);
	EXPECT_EQ(sql.rfind("SELECT \"My \"\"Partman\"\"\".create_parent(", 0), 0u) << sql;
	EXPECT_TRUE(QuotesBalanced(sql)) << sql;
}

TEST(PartConfigSql, RetentionUpdate)
{
	const std::string sql = pgmq::core::ConfigureRetentionSql("extensions");
	EXPECT_EQ(sql.rfind("UPDATE \"extensions\".part_config SET ", 0), 0u) << sql;
	EXPECT_EQ(Params(sql), Range(2));
	EXPECT_TRUE(Contains(sql, "retention = $1")) << sql;
	EXPECT_TRUE(Contains(sql, "retention_keep_table = false")) << sql;
	EXPECT_TRUE(Contains(sql, "automatic_maintenance = 'on'")) << sql;
	EXPECT_TRUE(Contains(sql, "infinite_time_partitions = true")) << sql;
	EXPECT_TRUE(Contains(sql, "WHERE parent_table OPERATOR(pg_catalog.=) $2")) << sql;
}

TEST(PartConfigSql, ControlLookup)
{
	const std::string sql = pgmq::core::PartConfigControlSql("partman");
	EXPECT_EQ(sql, "SELECT control FROM \"partman\".part_config WHERE parent_table OPERATOR(pg_catalog.=) $1");
}

TEST(PartConfigSql, TemplatesAndDeleteTakeBothParents)
{
	for (const std::string &sql : {pgmq::core::TemplateTablesSql("pm"), pgmq::core::DeletePartConfigSql("pm")}) {
		EXPECT_EQ(Params(sql), Range(2)) << sql;
		EXPECT_TRUE(Contains(sql, "\"pm\".part_config")) << sql;
		EXPECT_TRUE(Contains(sql, "ANY (ARRAY[$1, $2])")) << sql;
		EXPECT_FALSE(OccursUnquoted(sql, "pm.")) << sql;
		EXPECT_TRUE(QuotesBalanced(sql)) << sql;
	}
	EXPECT_EQ(pgmq::core::DeletePartConfigSql("pm").rfind("DELETE FROM \"pm\".part_config WHERE", 0), 0u);
	// Template tables are looked up by name, not through to_regclass of
	// partman's unquoted text (which rejects "q_my queue").
	const std::string templates = pgmq::core::TemplateTablesSql("pm");
	EXPECT_FALSE(Contains(templates, "to_regclass")) << templates;
	EXPECT_TRUE(Contains(templates, "pg_catalog.quote_ident(n.nspname)")) << templates;
}

TEST(PartitionStatusSql, ParamsAndQuoting)
{
	const std::string sql = pgmq::core::PartitionStatusSql("part man");
	EXPECT_EQ(Params(sql), Range(4)) << sql;
	EXPECT_TRUE(Contains(sql, "FROM \"part man\".part_config c")) << sql;
	EXPECT_TRUE(Contains(sql, "\"part man\".show_partitions(c.parent_table, 'DESC')")) << sql;
	EXPECT_TRUE(Contains(sql, "\"part man\".show_partition_info(")) << sql;
	// The sequence by OID ($4), never by a name a tenant could take first.
	EXPECT_TRUE(Contains(sql, "pg_catalog.pg_sequence_last_value($4)")) << sql;
	// The default partition is the adapter's to find (the catalog's
	// partdefid), never a relation named <parent>_default.
	EXPECT_FALSE(Contains(sql, "_default")) << sql;
	EXPECT_FALSE(Contains(sql, "to_regclass")) << sql;
	// runway_seconds by time: the runway itself, in seconds.
	EXPECT_TRUE(Contains(sql, "NULL::pg_catalog.int8, CASE WHEN info.child_end_time IS NOT NULL THEN EXTRACT(epoch FROM "))
		<< sql;
	EXPECT_FALSE(Contains(sql, "msg_id_seq")) << sql;
	EXPECT_FALSE(OccursUnquoted(sql, "part man")) << sql;
	EXPECT_TRUE(QuotesBalanced(sql)) << sql;
	// Queue first, then archive.
	EXPECT_TRUE(Contains(sql, "ORDER BY c.parent_table OPERATOR(pg_catalog.=) $2 DESC")) << sql;
}

TEST(PartitionSql, EveryOperatorIsQualified)
{
	// A hostile search_path must not redirect = or ||: every operator in the
	// partman statements is OPERATOR(pg_catalog.x).
	for (const std::string &sql : {pgmq::core::PartConfigControlSql("p"), pgmq::core::TemplateTablesSql("p"),
	                               pgmq::core::DeletePartConfigSql("p"), pgmq::core::PartitionStatusSql("p")}) {
		std::string stripped = sql;
		for (std::string_view wrapped : {"OPERATOR(pg_catalog.=)", "OPERATOR(pg_catalog.||)", "OPERATOR(pg_catalog.-)",
		                                 "OPERATOR(pg_catalog.+)"})
			for (std::size_t at; (at = stripped.find(wrapped)) != std::string::npos;)
				stripped.erase(at, wrapped.size());
		for (const char *bare : {" = ", " || ", " - ", " + "})
			EXPECT_FALSE(OccursUnquoted(stripped, bare)) << bare << " in " << sql;
	}
}

TEST(DefaultPartitionRows, EmptyWhenTheProbeSaysSoWhateverTheStatistics)
{
	pgmq::core::DefaultPartitionEvidence e;
	e.has_rows = false;
	e.tuples_inserted = 5000;
	e.live_tuples = 5000;  // not flushed yet after a recovery moved them
	e.reltuples = 5000;    // stale ANALYZE
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 0);
}

TEST(DefaultPartitionRows, LiveTuplesOnceTheStatisticsCountedInserts)
{
	pgmq::core::DefaultPartitionEvidence e;
	e.has_rows = true;
	e.tuples_inserted = 5001;
	e.live_tuples = 5001;
	e.reltuples = -1;  // never analysed: the old figure read 0 here
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 5001);
	e.reltuples = 100000;  // a stale ANALYZE does not win over the statistics
	e.live_tuples = 10;
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 10);
}

TEST(DefaultPartitionRows, AtLeastOneWhenTheProbeSeesARowTheStatisticsDoNot)
{
	pgmq::core::DefaultPartitionEvidence e;
	e.has_rows = true;  // committed a moment ago, not yet published
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 1);
	e.tuples_inserted = 3;
	e.live_tuples = 0;
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 1);
}

TEST(DefaultPartitionRows, ReltuplesWhenTheStatisticsWereLost)
{
	pgmq::core::DefaultPartitionEvidence e;
	e.has_rows = true;
	e.reltuples = 99999.6;  // after a crash: the last ANALYZE is all there is
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 100000);
	e.has_rows.reset();  // no probe: the estimate alone
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 100000);
	e.reltuples = -1;
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), 0);
	e.reltuples = 1e300;
	EXPECT_EQ(pgmq::core::DefaultPartitionRows(e), std::numeric_limits<int64_t>::max());
}

TEST(RunwaySeconds, RunwayOverTheMeasuredRate)
{
	using pgmq::core::RunwaySeconds;
	using pgmq::core::SendRateSample;
	// 1000 ids in the last 10 s: 100/s; 4999 ids of runway last 49.99 s.
	EXPECT_DOUBLE_EQ(*RunwaySeconds(4999, SendRateSample{1000, 10.0}), 49.99);
	// Slow queues stay exact: 1 id a day.
	EXPECT_DOUBLE_EQ(*RunwaySeconds(40000, SendRateSample{1, 86400.0}), 40000.0 * 86400.0);
	// No runway left: 0, rate or not.
	EXPECT_EQ(RunwaySeconds(0, std::nullopt), 0.0);
	EXPECT_EQ(RunwaySeconds(-3, SendRateSample{10, 1.0}), 0.0);
}

TEST(RunwaySeconds, UnknownWithoutARate)
{
	using pgmq::core::RunwaySeconds;
	using pgmq::core::SendRateSample;
	EXPECT_FALSE(RunwaySeconds(100, std::nullopt));                  // empty queue
	EXPECT_FALSE(RunwaySeconds(100, SendRateSample{0, 5.0}));        // nothing sent since
	EXPECT_FALSE(RunwaySeconds(100, SendRateSample{10, 0.0}));       // no time elapsed
	EXPECT_FALSE(RunwaySeconds(100, SendRateSample{10, -1.0}));      // clock skew
	EXPECT_FALSE(RunwaySeconds(100, SendRateSample{10, std::nan("")}));
}

}  // namespace
