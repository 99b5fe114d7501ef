// test/unit/statements_test.cpp
// The cached per-message statements: shapes, parameters, quoting, schema
// qualification, and what each statement does (API.md §2.3-2.7). The text of
// the FIFO, notify and topic statements belongs to fifo.hpp, notify.hpp and
// topic.hpp; here they get the rules every statement follows, and a check
// that StatementSql hands out exactly that text.
#include "pgmq/core/statements.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core_error_assert.hpp"
#include "pgmq/core/error.hpp"
#include "pgmq/core/fifo.hpp"
#include "pgmq/core/notify.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/dead_letters.hpp"
#include "pgmq/core/topic.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::ErrorKind;
using pgmq::core::kMaxStatementParams;
using pgmq::core::ParamType;
using pgmq::core::QualifiedTable;
using pgmq::core::ShapeOf;
using pgmq::core::Statement;
using pgmq::core::StatementShape;
using pgmq::core::StatementSql;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;
using pgmq_test::ThrowsCoreError;

std::vector<Statement> AllStatements()
{
	std::vector<Statement> out;
	for (int i = 0; i < static_cast<int>(Statement::Count); ++i)
		out.push_back(static_cast<Statement>(i));
	return out;
}

std::string Name(Statement s)
{
	static const char *const kNames[] = {
		"Send", "SendBatch", "Read", "ReadConditional", "Pop", "SetVt", "SetVtBatch", "Delete", "DeleteBatch",
		"Archive", "ArchiveBatch", "Metrics", "ReadGrouped", "ReadGroupedIndexed", "ReadGroupedRr",
		"ReadGroupedRrIndexed", "ReadGroupedHead", "ReadGroupedHeadIndexed", "LiveHead", "RecentSend",
		"SendDeduplicated", "SendBatchDeduplicated", "Retry", "Peek", "QueueState", "ReadPriority", "ReadConditionalPriority",
		"PopPriority", "ReadDeadLetter", "ReadConditionalDeadLetter",
		"ReadGroupedDeadLetter", "ReadGroupedIndexedDeadLetter", "ReadGroupedRrDeadLetter",
		"ReadGroupedRrIndexedDeadLetter", "ReadGroupedHeadDeadLetter", "ReadGroupedHeadIndexedDeadLetter",
		"ReadPriorityDeadLetter", "ReadConditionalPriorityDeadLetter",
		"NotifyThrottle", "SendTopic", "SendBatchTopic", "NotifyState",
	};
	const auto index = static_cast<std::size_t>(s);
	return index < sizeof kNames / sizeof kNames[0] ? kNames[index] : "Statement#" + std::to_string(index);
}

// Statements that are not about one queue: they ignore the table names.
bool PerQueue(Statement s)
{
	static_assert(static_cast<int>(Statement::Count) == 42, "name the new statement in Name()");
	return s != Statement::NotifyThrottle && s != Statement::SendTopic && s != Statement::SendBatchTopic &&
	       s != Statement::NotifyState;
}

bool IsGroupRead(Statement s)
{
	switch (s) {
	case Statement::ReadGrouped:
	case Statement::ReadGroupedIndexed:
	case Statement::ReadGroupedRr:
	case Statement::ReadGroupedRrIndexed:
	case Statement::ReadGroupedHead:
	case Statement::ReadGroupedHeadIndexed:
	case Statement::ReadGroupedDeadLetter:
	case Statement::ReadGroupedIndexedDeadLetter:
	case Statement::ReadGroupedRrDeadLetter:
	case Statement::ReadGroupedRrIndexedDeadLetter:
	case Statement::ReadGroupedHeadDeadLetter:
	case Statement::ReadGroupedHeadIndexedDeadLetter:
		return true;
	default:
		return false;
	}
}

// Literals that are fixed parts of a statement, not values: the FIFO group
// key and its default, and the ms -> s divisor of the notify throttle.
// The policies' header names and the keys of x-pgmq-dead-letter, the empty
// object that stands in for missing headers, 'object' (jsonb_typeof), and the
// base and the exponent cap of the retry backoff; the priority header, the
// JSON type it must have and the highest priority.
const std::set<std::string> kConstants = {"'x-pgmq-group'", "'_default_fifo_group'", "1000.0",
                                          "'x-pgmq-deduplication-id'", "'x-pgmq-dead-letter'", "'queue'", "'msg_id'",
                                          "'read_ct'", "'enqueued_at'", "'moved_at'", "'headers'", "'object'", "'{}'",
                                          "2", "62", "'x-pgmq-priority'", "'number'", "9",
                                          // the failure history and the reason a read dead-letters with
                                          "'x-pgmq-failures'", "'array'", "'[]'", "'reason'", "'at'",
                                          "'max_deliveries reached'", std::to_string(pgmq::core::kMaxReasonLength),
                                          std::to_string(pgmq::core::kMaxFailures)};

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

bool EndsWith(const std::string &text, const std::string &suffix)
{
	return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The SQL of any statement: a dead-letter claim also names its dead-letter
// queue's table, here the queue table with "_dead" appended.
std::string SqlFor(Statement s, const std::string &queue, const std::string &archive)
{
	if (pgmq::core::IsDeadLetterClaim(s))
		return pgmq::core::DeadLetterSql(s, queue, queue + "_dead");
	return StatementSql(s, queue, archive);
}

std::string Sql(Statement s) { return SqlFor(s, "q_orders", "a_orders"); }

const char kMessageColumns[] = "q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers";
const std::string kReturningMessage = std::string(" RETURNING ") + kMessageColumns;
// read and pop claim in a CTE, then return the claimed rows oldest first.
const std::string kClaimedOldestFirst = kReturningMessage + ") SELECT * FROM claimed ORDER BY msg_id";

// Table names as the adapter would pass them: lowercased, unvalidated (the
// core must stay safe even for names the character check would reject).
struct TablePair {
	std::string queue;
	std::string archive;
};

const TablePair kHostileTables[] = {
	{"q_orders", "a_orders"},
	{"q_queue-hyphened", "a_queue-hyphened"},
	{"q_with space.and.dots", "a_with space.and.dots"},
	{"q_x\"; drop table t; --", "a_x\"; drop table t; --"},
	{"q_\"\"", "a_\"\""},
	{"q_select", "a_select"},
	{"q_\xC3\xA9t\xC3\xA9", "a_\xC3\xA9t\xC3\xA9"},
	{"q_$1", "a_$1"},
	{"q_now()", "a_now()"},
};

// ---------------------------------------------------------------------------
// Shapes

TEST(StatementShapes, EveryStatementHasAShapeWithinTheParameterLimit)
{
	ASSERT_GT(static_cast<int>(Statement::Count), 0);
	for (Statement s : AllStatements()) {
		const StatementShape &shape = ShapeOf(s);
		EXPECT_GE(shape.nparams, 1) << Name(s);
		EXPECT_LE(shape.nparams, kMaxStatementParams) << Name(s);
		EXPECT_EQ(&shape, &ShapeOf(s)) << Name(s) << ": the adapter may keep the reference";
	}
}

TEST(StatementShapes, ParameterTypesAreAsDocumented)
{
	using P = ParamType;
	struct Expected {
		Statement statement;
		std::vector<ParamType> params;
	};
	const std::vector<ParamType> kDeadLetter = {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8, P::Text};
	// The two plain dead-letter reads start at the queue's head, their last parameter.
	const std::vector<ParamType> kReadDeadLetter = {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8, P::Text, P::Int8};
	const std::vector<ParamType> kConditionalDeadLetter = {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8,
	                                                       P::Text, P::Jsonb, P::Int8};
	const Expected expected[] = {
		{Statement::Send, {P::Jsonb, P::Jsonb, P::Timestamptz}},
		{Statement::SendBatch, {P::JsonbArray, P::JsonbArray, P::Timestamptz}},
		{Statement::Read, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8}},
		{Statement::ReadConditional, {P::Timestamptz, P::Timestamptz, P::Int8, P::Jsonb, P::Int8}},
		{Statement::Pop, {P::Timestamptz, P::Int8, P::Int8}},
		{Statement::SetVt, {P::Int8, P::Timestamptz}},
		{Statement::SetVtBatch, {P::Int8Array, P::Timestamptz}},
		{Statement::Delete, {P::Int8}},
		{Statement::DeleteBatch, {P::Int8Array}},
		{Statement::Archive, {P::Int8}},
		{Statement::ArchiveBatch, {P::Int8Array}},
		{Statement::Metrics, {P::Text, P::Regclass}},
		{Statement::ReadGrouped, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::ReadGroupedIndexed, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::ReadGroupedRr, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::ReadGroupedRrIndexed, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::ReadGroupedHead, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::ReadGroupedHeadIndexed, {P::Timestamptz, P::Timestamptz, P::Int8}},
		{Statement::NotifyThrottle, {P::Text, P::Timestamptz}},
		{Statement::SendTopic, {P::Text, P::Jsonb, P::Jsonb, P::Timestamptz}},
		{Statement::SendBatchTopic, {P::Text, P::JsonbArray, P::JsonbArray, P::Timestamptz}},
		{Statement::NotifyState, {P::Text}},
		{Statement::LiveHead, {P::Int8}},
		{Statement::RecentSend, {P::Int8, P::Regclass}},
		{Statement::SendDeduplicated,
		 {P::Jsonb, P::Jsonb, P::Timestamptz, P::Text, P::Timestamptz, P::Timestamptz, P::Regclass}},
		{Statement::SendBatchDeduplicated,
		 {P::JsonbArray, P::JsonbArray, P::Timestamptz, P::Text, P::Timestamptz, P::Timestamptz, P::Regclass}},
		{Statement::Retry, {P::Int8, P::Timestamptz, P::Int8, P::Int8, P::Float8, P::Text}},
		{Statement::QueueState, {P::Timestamptz}},
		{Statement::Peek, {P::Int8, P::Int8}},
		{Statement::ReadPriority, {P::Timestamptz, P::Timestamptz, P::Int8, P::Int8}},
		{Statement::ReadConditionalPriority, {P::Timestamptz, P::Timestamptz, P::Int8, P::Jsonb, P::Int8}},
		{Statement::PopPriority, {P::Timestamptz, P::Int8, P::Int8}},
		{Statement::ReadDeadLetter, kReadDeadLetter},
		{Statement::ReadConditionalDeadLetter, kConditionalDeadLetter},
		{Statement::ReadGroupedDeadLetter, kDeadLetter},
		{Statement::ReadGroupedIndexedDeadLetter, kDeadLetter},
		{Statement::ReadGroupedRrDeadLetter, kDeadLetter},
		{Statement::ReadGroupedRrIndexedDeadLetter, kDeadLetter},
		{Statement::ReadGroupedHeadDeadLetter, kDeadLetter},
		{Statement::ReadGroupedHeadIndexedDeadLetter, kDeadLetter},
		{Statement::ReadPriorityDeadLetter, kReadDeadLetter},
		{Statement::ReadConditionalPriorityDeadLetter, kConditionalDeadLetter},
	};
	// A new statement needs its documented shape here.
	ASSERT_EQ(sizeof expected / sizeof expected[0], AllStatements().size()) << "statements.hpp has new statements";
	for (const Expected &e : expected) {
		const StatementShape &shape = ShapeOf(e.statement);
		ASSERT_EQ(shape.nparams, static_cast<int>(e.params.size())) << Name(e.statement);
		for (int i = 0; i < shape.nparams; ++i)
			EXPECT_EQ(shape.params[i], e.params[i]) << Name(e.statement) << " $" << i + 1;
	}
}

TEST(StatementShapes, ParameterCountMatchesTheHighestParameterInTheSql)
{
	for (Statement s : AllStatements()) {
		const std::string sql = Sql(s);
		EXPECT_EQ(pgmq_test::MaxParam(sql), ShapeOf(s).nparams) << Name(s) << ": " << sql;
		// No gap: an unused $n would leave its type to be inferred, or fail.
		std::set<int> all;
		for (int i = 1; i <= ShapeOf(s).nparams; ++i)
			all.insert(i);
		EXPECT_EQ(pgmq_test::Params(sql), all) << Name(s) << ": " << sql;
	}
}

TEST(StatementShapes, CountIsNotAStatement)
{
	EXPECT_TRUE(ThrowsCoreError([] { ShapeOf(Statement::Count); }, ErrorKind::Internal, "unknown statement"));
	EXPECT_TRUE(ThrowsCoreError([] { StatementSql(Statement::Count, "q_x", "a_x"); }, ErrorKind::Internal,
	                            "unknown statement"));
	const auto bogus = static_cast<Statement>(200);
	EXPECT_TRUE(ThrowsCoreError([&] { ShapeOf(bogus); }, ErrorKind::Internal, "unknown statement"));
	EXPECT_TRUE(ThrowsCoreError([&] { StatementSql(bogus, "q_x", "a_x"); }, ErrorKind::Internal, "unknown statement"));
}

// ---------------------------------------------------------------------------
// Hygiene: quoting, literals, schema qualification

TEST(StatementHygiene, EveryStatementHasSqlAndFollowsTheRules)
{
	for (const TablePair &tables : kHostileTables) {
		for (Statement s : AllStatements()) {
			const std::string sql = SqlFor(s, tables.queue, tables.archive);
			EXPECT_FALSE(sql.empty()) << Name(s);
			const std::vector<std::string> problems = HygieneProblems(sql, kConstants);
			EXPECT_TRUE(problems.empty()) << Name(s) << " for " << tables.queue << ":" << JoinLines(problems) << "\n"
			                              << sql;
		}
	}
}

TEST(StatementHygiene, TableNamesAppearOnlyAsQuotedQualifiedIdentifiers)
{
	for (const TablePair &tables : kHostileTables) {
		for (Statement s : AllStatements()) {
			const std::string sql = SqlFor(s, tables.queue, tables.archive);
			// Every quoted identifier is one of this queue's objects (or the
			// "C" collation of the FIFO group key).
			std::set<std::string> allowed;
			if (PerQueue(s))
				allowed.insert(tables.queue);
			if (s == Statement::Archive || s == Statement::ArchiveBatch)
				allowed.insert(tables.archive);
			if (IsGroupRead(s))
				allowed.insert("C");
			if (pgmq::core::IsDeadLetterClaim(s))
				allowed.insert(tables.queue + "_dead");
			const std::vector<std::string> quoted = pgmq_test::QuotedIdentifiers(sql);
			EXPECT_EQ(std::set<std::string>(quoted.begin(), quoted.end()), allowed) << Name(s) << ": " << sql;
			// With them removed, no trace of the name remains.
			const std::string skeleton = pgmq_test::Skeleton(sql);
			EXPECT_FALSE(Contains(skeleton, tables.queue)) << Name(s) << ": " << skeleton;
			EXPECT_FALSE(Contains(skeleton, tables.archive)) << Name(s) << ": " << skeleton;
			EXPECT_EQ(Contains(sql, QualifiedTable(tables.queue)), PerQueue(s)) << Name(s) << ": " << sql;
		}
	}
}

TEST(StatementHygiene, OnlyTheQuotedIdentifiersDependOnTheQueue)
{
	for (Statement s : AllStatements()) {
		const std::string reference = pgmq_test::Skeleton(Sql(s));
		for (const TablePair &tables : kHostileTables)
			EXPECT_EQ(pgmq_test::Skeleton(SqlFor(s, tables.queue, tables.archive)), reference)
				<< Name(s) << " for " << tables.queue;
	}
}

TEST(StatementHygiene, NoBareTimeFunctions)
{
	// The adapter passes times as parameters; whatever is left is pg_catalog's.
	for (Statement s : AllStatements()) {
		const std::string sql = Sql(s);
		for (const char *bare : {" now()", "(now()", " clock_timestamp()", "(clock_timestamp()", "CURRENT_TIMESTAMP",
		                         "statement_timestamp", "transaction_timestamp"})
			EXPECT_FALSE(Contains(sql, bare)) << Name(s) << " contains " << bare << ": " << sql;
		EXPECT_FALSE(Contains(sql, "clock_timestamp")) << Name(s) << ": time comes from the $n parameters";
	}
}

TEST(StatementHygiene, NeverStarOverATable)
{
	// Upgraded tables have another physical column order (API.md §1.2): a
	// star may only read a CTE whose columns the statement names.
	for (Statement s : AllStatements()) {
		const std::string skeleton = pgmq_test::Skeleton(Sql(s));
		EXPECT_FALSE(Contains(skeleton, "SELECT * FROM pgmq")) << Name(s);
		EXPECT_FALSE(Contains(skeleton, "RETURNING *")) << Name(s);
		EXPECT_FALSE(Contains(skeleton, ". *")) << Name(s);
	}
}

// The checker must be able to fail: each of these breaks one rule.
TEST(StatementHygiene, CheckerRejectsUnsafeSql)
{
	const char *unsafe[] = {
		"SELECT now() FROM pgmq.\"q_x\"",
		"SELECT pg_catalog.count(*) FROM q_x",
		"SELECT pg_catalog.count(*) FROM pgmq.q_x",
		"SELECT msg_id FROM pgmq.\"q_x\" WHERE vt <= $1",
		"SELECT msg_id FROM pgmq.\"q_x\" WHERE message @> $1",
		"UPDATE pgmq.\"q_x\" SET vt = pg_catalog.now() OPERATOR(pg_catalog.+) '1 second'",
		"SELECT msg_id FROM pgmq.\"q_x\" LIMIT 10",
		"SELECT $1::jsonb",
		"DELETE FROM pgmq.\"q_x\"; DROP TABLE t",
		"DELETE FROM pgmq.\"q_x\" -- comment",
		"SELECT msg_id FROM pgmq.\"q_x\" WHERE msg_id OPERATOR(=) $1",
		"SELECT $$text$$",
		"SELECT msg_id FROM \"q_x\"",
		"SELECT msg_id FROM pgmq.\"q_x",
		"SELECT unnest($1)",
		"SELECT * FROM pgmq.\"q_x\"",
		"WITH c AS (SELECT 1) SELECT * FROM pgmq.\"q_x\"",
		"SELECT pgmq.q_x.msg_id FROM pgmq.\"q_x\"",
		"SELECT 1 FROM pgmq.\"q_x\" WHERE headers OPERATOR(pg_catalog.->>) 'x-pgmq-group' OPERATOR(pg_catalog.=) 'a'",
	};
	for (const char *sql : unsafe)
		EXPECT_FALSE(HygieneProblems(sql, kConstants).empty()) << "not caught: " << sql;
	const char *safe[] = {
		"SELECT pg_catalog.count(*) FROM pgmq.\"q_x\" AS q WHERE q.vt OPERATOR(pg_catalog.<=) $1",
		"WITH c AS (DELETE FROM pgmq.\"q_x\" RETURNING msg_id) SELECT * FROM c ORDER BY msg_id",
		"SELECT s.msg_id FROM pgmq.topic_bindings AS b CROSS JOIN LATERAL pgmq.send(b.queue_name, $1) AS s(msg_id)",
	};
	for (const char *sql : safe)
		EXPECT_TRUE(HygieneProblems(sql, kConstants).empty()) << sql << JoinLines(HygieneProblems(sql, kConstants));
	// A constant is allowed only when the caller names it.
	EXPECT_FALSE(HygieneProblems("SELECT 1 FROM pgmq.meta WHERE queue_name OPERATOR(pg_catalog.=) 'x-pgmq-group'").empty());
}

// ---------------------------------------------------------------------------
// What each statement does

TEST(StatementSql, SendInsertsOneRowAndReturnsItsId)
{
	const std::string sql = Sql(Statement::Send);
	EXPECT_EQ(sql.rfind("INSERT INTO pgmq.\"q_orders\"", 0), 0u) << sql;
	EXPECT_TRUE(Contains(sql, "(vt, message, headers) VALUES ($3, $1, $2)")) << sql;
	EXPECT_TRUE(EndsWith(sql, "RETURNING q.msg_id")) << sql;
}

TEST(StatementSql, SendBatchUnnestsMessagesAndHeadersInLockstep)
{
	const std::string sql = Sql(Statement::SendBatch);
	EXPECT_EQ(sql.rfind("INSERT INTO pgmq.\"q_orders\"", 0), 0u) << sql;
	EXPECT_TRUE(Contains(sql, "(vt, message, headers) SELECT $3, m.message, m.headers")) << sql;
	// ROWS FROM pads a NULL or shorter headers array with NULLs.
	EXPECT_TRUE(Contains(sql, "ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2))")) << sql;
	EXPECT_TRUE(EndsWith(sql, "RETURNING q.msg_id")) << sql;
}

TEST(StatementSql, ReadClaimsOldestVisibleSkippingLockedRows)
{
	const std::string sql = Sql(Statement::Read);
	// The scan starts at the queue's head ($4), not at the index's first entry.
	EXPECT_TRUE(Contains(sql, "WHERE msg_id OPERATOR(pg_catalog.>=) $4 AND vt OPERATOR(pg_catalog.<=) $1 ORDER BY "
	                          "msg_id LIMIT $3 FOR UPDATE SKIP LOCKED"))
		<< sql;
	EXPECT_TRUE(Contains(sql, "SET vt = $2, read_ct = q.read_ct OPERATOR(pg_catalog.+) 1, last_read_at = $1")) << sql;
	EXPECT_TRUE(Contains(sql, "claimed AS (UPDATE pgmq.\"q_orders\" AS q")) << sql;
	EXPECT_FALSE(Contains(sql, "@>")) << sql;
	// Oldest first, whatever order the claiming join produced.
	EXPECT_TRUE(EndsWith(sql, kClaimedOldestFirst)) << sql;
}

TEST(StatementSql, ReadConditionalIsReadWithAContainmentFilter)
{
	const std::string read = Sql(Statement::Read);
	const std::string conditional = Sql(Statement::ReadConditional);
	const std::string filter = " AND message OPERATOR(pg_catalog.@>) $4";
	ASSERT_TRUE(Contains(conditional, filter)) << conditional;
	// The filter sits inside the candidate selection, before ORDER BY/LIMIT.
	EXPECT_LT(conditional.find(filter), conditional.find("ORDER BY msg_id")) << conditional;
	// The head is its fifth parameter, after the condition.
	std::string without = conditional;
	without.erase(without.find(filter), filter.size());
	without.replace(without.find(">=) $5"), 6, ">=) $4");
	EXPECT_EQ(without, read);
}

TEST(StatementSql, PopDeletesVisibleRowsAndReturnsThemAsStored)
{
	const std::string sql = Sql(Statement::Pop);
	EXPECT_TRUE(Contains(sql, "WHERE msg_id OPERATOR(pg_catalog.>=) $3 AND vt OPERATOR(pg_catalog.<=) $1 ORDER BY "
	                          "msg_id LIMIT $2 FOR UPDATE SKIP LOCKED"))
		<< sql;
	EXPECT_TRUE(Contains(sql, "claimed AS (DELETE FROM pgmq.\"q_orders\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT msg_id")) << sql;
	EXPECT_FALSE(Contains(sql, "read_ct OPERATOR")) << "pop does not count a read: " << sql;
	EXPECT_FALSE(Contains(sql, "UPDATE pgmq")) << sql;
	EXPECT_TRUE(EndsWith(sql, kClaimedOldestFirst)) << sql;
}

TEST(StatementSql, LiveHeadIsTheLowestIdFromTheOldHeadWhateverItsVt)
{
	const std::string sql = Sql(Statement::LiveHead);
	EXPECT_TRUE(Contains(sql, "SELECT pg_catalog.min(q.msg_id)")) << sql;
	EXPECT_TRUE(Contains(sql, "WHERE q.msg_id OPERATOR(pg_catalog.>=) $1")) << sql;
	// A leased or delayed message is live: the head must not pass it.
	EXPECT_FALSE(Contains(sql, "vt")) << sql;
	// Rows of a prepared transaction are invisible until COMMIT PREPARED.
	EXPECT_TRUE(Contains(sql, "pg_catalog.pg_prepared_xacts")) << sql;
}

TEST(StatementSql, SetVtChangesOnlyVt)
{
	const std::string one = Sql(Statement::SetVt);
	const std::string many = Sql(Statement::SetVtBatch);
	EXPECT_EQ(one, "UPDATE pgmq.\"q_orders\" AS q SET vt = $2 WHERE q.msg_id OPERATOR(pg_catalog.=) $1" +
	                   kReturningMessage);
	EXPECT_EQ(many, "UPDATE pgmq.\"q_orders\" AS q SET vt = $2 WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1)" +
	                    kReturningMessage);
	// No SKIP LOCKED: set_vt waits on locked rows, as upstream.
	EXPECT_FALSE(Contains(one, "SKIP LOCKED"));
	EXPECT_FALSE(Contains(many, "SKIP LOCKED"));
}

TEST(StatementSql, DeleteReturnsDeletedIds)
{
	EXPECT_EQ(Sql(Statement::Delete),
	          "DELETE FROM pgmq.\"q_orders\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) $1 RETURNING q.msg_id");
	EXPECT_EQ(Sql(Statement::DeleteBatch),
	          "DELETE FROM pgmq.\"q_orders\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1) RETURNING q.msg_id");
}

TEST(StatementSql, ArchiveMovesEveryColumnInOneStatement)
{
	const std::string columns = "msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers";
	for (Statement s : {Statement::Archive, Statement::ArchiveBatch}) {
		const std::string sql = Sql(s);
		const std::string match = s == Statement::Archive ? "$1" : "ANY ($1)";
		EXPECT_EQ(sql, "WITH moved AS (DELETE FROM pgmq.\"q_orders\" WHERE msg_id OPERATOR(pg_catalog.=) " + match +
		                   " RETURNING " + columns + ") INSERT INTO pgmq.\"a_orders\" (" + columns + ") SELECT " +
		                   columns + " FROM moved RETURNING msg_id")
			<< Name(s);
		// archived_at is left to its default, now().
		EXPECT_FALSE(Contains(sql, "archived_at")) << Name(s);
	}
}

TEST(StatementSql, ArchiveUsesTheArchiveTableItIsGiven)
{
	const std::string sql = StatementSql(Statement::Archive, "q_one", "a_other");
	EXPECT_TRUE(Contains(sql, "DELETE FROM pgmq.\"q_one\"")) << sql;
	EXPECT_TRUE(Contains(sql, "INSERT INTO pgmq.\"a_other\"")) << sql;
	// The other statements never touch the archive.
	for (Statement s : AllStatements()) {
		if (s != Statement::Archive && s != Statement::ArchiveBatch) {
			EXPECT_FALSE(Contains(SqlFor(s, "q_one", "a_other"), "a_other")) << Name(s);
		}
	}
}

TEST(StatementSql, RecentSendGoesThroughTheMsgIdIndexFromTheSequence)
{
	const std::string sql = Sql(Statement::RecentSend);
	// The sequence by OID, the window as a parameter, the newest id from it.
	EXPECT_TRUE(Contains(sql, "COALESCE(pg_catalog.pg_sequence_last_value($2), 0) AS last_id")) << sql;
	EXPECT_TRUE(Contains(sql, "GREATEST(s.last_id OPERATOR(pg_catalog.-) $1, 0)")) << sql;
	// First the oldest message in the window, else the newest before it:
	// ordered by msg_id with LIMIT 1, so each branch is one index descent.
	const std::size_t in_window = sql.find("WHERE q.msg_id OPERATOR(pg_catalog.>=) ");
	const std::size_t before = sql.find("WHERE q.msg_id OPERATOR(pg_catalog.<) ");
	ASSERT_NE(in_window, std::string::npos) << sql;
	ASSERT_NE(before, std::string::npos) << sql;
	EXPECT_LT(in_window, before) << sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY q.msg_id LIMIT 1) UNION ALL")) << sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY q.msg_id DESC LIMIT 1) LIMIT 1) r ON true")) << sql;
	EXPECT_TRUE(Contains(sql, "FROM pgmq.\"q_orders\" AS q")) << sql;
	EXPECT_FALSE(Contains(sql, "msg_id_seq")) << sql;
}

TEST(StatementSql, MetricsColumnsInMetricsResultOrder)
{
	const std::string sql = Sql(Statement::Metrics);
	const std::string in_order[] = {
		"SELECT $1, ",                                              // queue_name as given
		"pg_catalog.count(*), ",                                    // queue_length
		"pg_catalog.max(q.enqueued_at))::pg_catalog.int4, ",        // newest_msg_age_sec
		"pg_catalog.min(q.enqueued_at))::pg_catalog.int4, ",        // oldest_msg_age_sec
		"COALESCE(pg_catalog.pg_sequence_last_value($2), 0), ",    // total_messages, sequence by OID
		"pg_catalog.now(), ",                                       // scrape_time
		"pg_catalog.count(*) FILTER (WHERE q.vt OPERATOR(pg_catalog.<=) pg_catalog.now()), ",  // visible
		"NULL::pg_catalog.int8 ",                                   // default_partition_length: the adapter's
		"FROM pgmq.\"q_orders\" AS q",
	};
	std::size_t pos = 0;
	for (const std::string &part : in_order) {
		const std::size_t found = sql.find(part, pos);
		ASSERT_NE(found, std::string::npos) << "missing or out of order: " << part << "\n" << sql;
		pos = found + part.size();
	}
	// No default partition by a guessed name, and no count of it here.
	EXPECT_FALSE(Contains(sql, "_default")) << sql;
	EXPECT_FALSE(Contains(sql, "to_regclass")) << sql;
	// Never the sequence by name: a tenant can take q_<name>_msg_id_seq first.
	EXPECT_FALSE(Contains(sql, "msg_id_seq")) << sql;
	EXPECT_TRUE(Contains(sql, "EXTRACT(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.max(")) << sql;
}

TEST(StatementSql, MessageRowsComeBackInMessageRecordOrder)
{
	for (Statement s : {Statement::Read, Statement::ReadConditional, Statement::Pop})
		EXPECT_TRUE(EndsWith(Sql(s), kClaimedOldestFirst)) << Name(s) << ": " << Sql(s);
	for (Statement s : {Statement::SetVt, Statement::SetVtBatch})
		EXPECT_TRUE(EndsWith(Sql(s), kReturningMessage)) << Name(s) << ": " << Sql(s);
	for (Statement s : AllStatements()) {
		if (!IsGroupRead(s))
			continue;
		EXPECT_TRUE(Contains(Sql(s), "SELECT u.msg_id, u.read_ct, u.enqueued_at, u.last_read_at, u.vt, u.message, "
		                             "u.headers FROM updated AS u ORDER BY "))
			<< Name(s) << ": " << Sql(s);
	}
}

TEST(StatementSql, GroupReadsAreTheFifoStatements)
{
	using pgmq::core::GroupRead;
	using pgmq::core::GroupReadSql;
	EXPECT_EQ(Sql(Statement::ReadGrouped), GroupReadSql(GroupRead::Batch, false, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedIndexed), GroupReadSql(GroupRead::Batch, true, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedRr), GroupReadSql(GroupRead::RoundRobin, false, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedRrIndexed), GroupReadSql(GroupRead::RoundRobin, true, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedHead), GroupReadSql(GroupRead::Head, false, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedHeadIndexed), GroupReadSql(GroupRead::Head, true, "q_orders"));
	EXPECT_EQ(Sql(Statement::ReadGroupedHeadIndexedDeadLetter),
	          GroupReadSql(GroupRead::Head, true, "q_orders", "q_orders_dead"));
	// Twelve different statements: six, and each with its dead letters.
	std::set<std::string> texts;
	for (Statement s : AllStatements())
		if (IsGroupRead(s))
			texts.insert(Sql(s));
	EXPECT_EQ(texts.size(), 12u);
}

TEST(StatementSql, GlobalStatementsIgnoreTheTableNames)
{
	EXPECT_EQ(Sql(Statement::NotifyThrottle), pgmq::core::NotifyThrottleSql());
	EXPECT_EQ(Sql(Statement::SendTopic), pgmq::core::SendTopicSql());
	EXPECT_EQ(Sql(Statement::SendBatchTopic), pgmq::core::SendBatchTopicSql());
	EXPECT_EQ(Sql(Statement::NotifyState), pgmq::core::NotifyStateSql());
	for (Statement s : AllStatements()) {
		if (PerQueue(s))
			continue;
		// Their plan-cache entry is the statement's own (PlanFor(statement)).
		EXPECT_EQ(StatementSql(s, "", ""), Sql(s)) << Name(s);
		EXPECT_EQ(StatementSql(s, "q_other", "a_other"), Sql(s)) << Name(s);
	}
}

TEST(StatementShapes, IsPerQueueListsTheStatementsOnQueueTables)
{
	// The adapter's plan cache keys by queue exactly when IsPerQueue says so.
	for (Statement s : AllStatements())
		EXPECT_EQ(pgmq::core::IsPerQueue(s), PerQueue(s)) << Name(s);
}

TEST(StatementSql, IsDeterministic)
{
	for (Statement s : AllStatements())
		EXPECT_EQ(Sql(s), Sql(s)) << Name(s);
}

}  // namespace
