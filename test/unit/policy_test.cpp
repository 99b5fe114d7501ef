// test/unit/policy_test.cpp
// Delivery policy rules (policy.hpp) and the dead-letter claims
// (statements.hpp): the backoff formula and its jitter, the argument checks,
// that a dead-letter claim picks rows exactly as the plain claim does and
// then either moves or claims each one, and that the policy statements
// follow the hygiene rules of every statement.
#include "pgmq/core/policy.hpp"
#include "pgmq/core/dead_letters.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core_error_assert.hpp"
#include "pgmq/core/error.hpp"
#include "pgmq/core/fifo.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::ErrorKind;
using pgmq::core::Statement;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;
using pgmq_test::ThrowsCoreError;

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

const std::set<std::string> kConstants = {"'x-pgmq-deduplication-id'", "'x-pgmq-dead-letter'", "'queue'", "'headers'",
                                          "'object'", "'{}'", "'msg_id'", "'number'",
                                          "'max_deliveries reached'", "'reason'", "'read_ct'", "'enqueued_at'",
                                          "'moved_at'", "'x-pgmq-failures'", "'array'", "'[]'", "'at'",
                                          std::to_string(pgmq::core::kMaxReasonLength),
                                          std::to_string(pgmq::core::kMaxFailures)};

TEST(Backoff, DoublesFromBaseUpToMax)
{
	using pgmq::core::BackoffSeconds;
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 1), 10);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 2), 20);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 3), 40);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 4), 80);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 5), 100);
	// Never read counts as read once; a huge read_ct stays at max.
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 0), 10);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, -5), 10);
	EXPECT_DOUBLE_EQ(BackoffSeconds(10, 100, 2147483647), 100);
	EXPECT_DOUBLE_EQ(BackoffSeconds(0, 0, 7), 0);
	EXPECT_DOUBLE_EQ(BackoffSeconds(2147483647, 2147483647, 63), 2147483647.0);
}

TEST(Backoff, JitterShortensByAtMostATenth)
{
	using pgmq::core::BackoffJitter;
	EXPECT_DOUBLE_EQ(BackoffJitter(0.0), 1.0);
	EXPECT_DOUBLE_EQ(BackoffJitter(0.5), 0.95);
	EXPECT_NEAR(BackoffJitter(0.999999), 0.9, 1e-6);
	// Out of range input is clamped: never longer than max, never below 0.9.
	EXPECT_DOUBLE_EQ(BackoffJitter(-3), 1.0);
	EXPECT_DOUBLE_EQ(BackoffJitter(7), 0.9);
}

TEST(PolicyArguments, AreChecked)
{
	using pgmq::core::CheckBackoff;
	using pgmq::core::CheckMaxDeliveries;
	using pgmq::core::CheckRedriveQuantity;
	EXPECT_TRUE(ThrowsCoreError([] { CheckMaxDeliveries(0); }, ErrorKind::InvalidParameter, "max_deliveries must be at least 1"));
	EXPECT_NO_THROW(CheckMaxDeliveries(1));
	EXPECT_TRUE(ThrowsCoreError([] { CheckBackoff(-1, 5); }, ErrorKind::InvalidParameter, "base_seconds must not be negative"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckBackoff(6, 5); }, ErrorKind::InvalidParameter, "max_seconds must be at least base_seconds"));
	EXPECT_NO_THROW(CheckBackoff(0, 0));
	EXPECT_TRUE(ThrowsCoreError([] { CheckRedriveQuantity(-1); }, ErrorKind::InvalidParameter, "qty must not be negative"));
	EXPECT_NO_THROW(CheckRedriveQuantity(0));
}

// The dead-letter read picks with the plain read's own pick (the
// composition the read path's other changes rely on), and a picked row is
// moved exactly when it is not claimed.
TEST(DeadLetterClaim, PicksAsTheReadAndEitherMovesOrClaims)
{
	const std::string read = pgmq::core::StatementSql(Statement::Read, "q_jobs", "a_jobs");
	const std::string dead = pgmq::core::DeadLetterSql(Statement::ReadDeadLetter, "q_jobs", "q_jobs_dlq");
	std::string pick = read.substr(read.find(" WHERE q.msg_id"), read.find(" RETURNING") - read.find(" WHERE q.msg_id"));
	// The same pick from the queue's head, which is the read's $4 and here $6.
	pick.replace(pick.find(">=) $4"), 6, ">=) $6");
	EXPECT_TRUE(Contains(dead, pick)) << dead;
	EXPECT_TRUE(Contains(dead, "DELETE FROM pgmq.\"q_jobs\" AS q USING picked AS p")) << dead;
	EXPECT_TRUE(Contains(dead, "q.read_ct OPERATOR(pg_catalog.>=) $4")) << dead;
	EXPECT_TRUE(Contains(dead, "q.read_ct OPERATOR(pg_catalog.<) $4")) << dead;
	EXPECT_TRUE(Contains(dead, "INSERT INTO pgmq.\"q_jobs_dlq\" (vt, message, headers)")) << dead;
	EXPECT_TRUE(Contains(dead, "'x-pgmq-dead-letter'")) << dead;
	const std::string conditional =
		pgmq::core::DeadLetterSql(Statement::ReadConditionalDeadLetter, "q_jobs", "q_jobs_dlq");
	EXPECT_TRUE(Contains(conditional, "message OPERATOR(pg_catalog.@>) $6")) << conditional;
}

TEST(DeadLetterClaim, EveryClaimHasOneAndOthersNone)
{
	using pgmq::core::DeadLetterClaimOf;
	for (Statement s : {Statement::Read, Statement::ReadConditional, Statement::ReadGrouped, Statement::ReadGroupedIndexed,
	                    Statement::ReadGroupedRr, Statement::ReadGroupedRrIndexed, Statement::ReadGroupedHead,
	                    Statement::ReadGroupedHeadIndexed})
		EXPECT_TRUE(pgmq::core::IsDeadLetterClaim(DeadLetterClaimOf(s))) << static_cast<int>(s);
	for (Statement s : {Statement::Pop, Statement::Send, Statement::SetVt, Statement::Retry})
		EXPECT_EQ(DeadLetterClaimOf(s), Statement::Count);
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::DeadLetterSql(Statement::Read, "q_a", "q_b"); }, ErrorKind::Internal,
	                            "not a dead-letter claim"));
	EXPECT_TRUE(ThrowsCoreError([] { pgmq::core::StatementSql(Statement::ReadDeadLetter, "q_a", "a_a"); },
	                            ErrorKind::Internal, "a dead-letter claim needs its dead-letter queue (DeadLetterSql)"));
}

TEST(DeadLetterClaim, GroupReadWithoutDeadLettersIsUnchanged)
{
	using pgmq::core::GroupRead;
	using pgmq::core::GroupReadSql;
	const std::string plain = GroupReadSql(GroupRead::Batch, true, "q_jobs");
	const std::string dead = GroupReadSql(GroupRead::Batch, true, "q_jobs", "q_jobs_dlq");
	EXPECT_FALSE(Contains(plain, "$4")) << plain;
	EXPECT_FALSE(Contains(plain, "q_jobs_dlq")) << plain;
	EXPECT_TRUE(Contains(dead, "USING kept AS p")) << dead;
	EXPECT_TRUE(Contains(dead, "AND q.read_ct OPERATOR(pg_catalog.<) $4 RETURNING")) << dead;
}

TEST(PolicySql, FollowsTheStatementRules)
{
	using namespace pgmq::core;
	const std::string statements[] = {
		LoadPolicySql(),
		MetaQueueNameSql(),
		SetPolicySql(PolicyKind::DeadLetter),
		SetPolicySql(PolicyKind::RetryBackoff),
		SetPolicySql(PolicyKind::Deduplication),
		SetPolicySql(PolicyKind::Retention),
		SetPolicySql(PolicyKind::Pause),
		ClearPolicySql(PolicyKind::DeadLetter),
		ClearPolicySql(PolicyKind::Retention),
		ClearPolicySql(PolicyKind::Pause),
		DeleteEmptyPolicySql(),
		RedriveSql("q_dlq", "q_jobs"),
		RetentionQueueBatchSql("q_jobs"),
		RetentionArchiveBatchSql("a_jobs"),
		ExpireDeduplicationBatchSql(),
		DeleteDeduplicationSql(),
		DeduplicatedResolveSql("q_jobs"),
		ListPoliciesSql(),
		QueueStatesSql(),
		QueueStateSql(),
		DeadLetteredCountSql("q_dlq"),
		RetentionQueuesSql(),
	};
	for (const std::string &sql : statements) {
		const auto problems = HygieneProblems(sql, kConstants);
		EXPECT_TRUE(problems.empty()) << JoinLines(problems) << "\n" << sql;
	}
}

TEST(PolicySql, RetentionAndRedriveSkipLockedRowsInBoundedBatches)
{
	using namespace pgmq::core;
	for (const std::string &sql : {RetentionQueueBatchSql("q_jobs"), RetentionArchiveBatchSql("a_jobs"),
	                               RedriveSql("q_dlq", "q_jobs"), ExpireDeduplicationBatchSql()}) {
		EXPECT_TRUE(Contains(sql, "FOR UPDATE SKIP LOCKED")) << sql;
		EXPECT_TRUE(Contains(sql, "LIMIT $")) << sql;
	}
	EXPECT_TRUE(Contains(RetentionQueueBatchSql("q_jobs"), "enqueued_at OPERATOR(pg_catalog.<) $1"));
	EXPECT_TRUE(Contains(RetentionArchiveBatchSql("a_jobs"), "archived_at OPERATOR(pg_catalog.<) $1"));
	EXPECT_TRUE(Contains(RedriveSql("q_dlq", "q_jobs"), ", d.msg_id LIMIT $1 FOR UPDATE SKIP LOCKED"));
}

}  // namespace

namespace {

// A send with a deduplication id looks the id up first, by the primary key
// only, so a known id inserts nothing; the message insert depends on it.
TEST(DeduplicatedSend, FindsTheIdBeforeInsertingAndOnlyByItsKey)
{
	using pgmq::core::StatementSql;
	for (Statement s : {Statement::SendDeduplicated, Statement::SendBatchDeduplicated}) {
		const std::string sql = StatementSql(s, "q_jobs", "a_jobs");
		EXPECT_TRUE(Contains(sql, "(d.expires_at OPERATOR(pg_catalog.>) $5) IS TRUE")) << sql;
		EXPECT_TRUE(Contains(sql, "ON CONFLICT (queue_name, deduplication_id) DO UPDATE")) << sql;
		EXPECT_TRUE(Contains(sql, "WHERE d.expires_at OPERATOR(pg_catalog.<=) $5")) << sql;
		EXPECT_LT(sql.find("pre AS ("), sql.find("INSERT INTO pgmq.\"q_jobs\"")) << sql;
	}
	EXPECT_TRUE(Contains(StatementSql(Statement::SendDeduplicated, "q_jobs", "a_jobs"), "WHERE NOT EXISTS (SELECT FROM pre)"));
	const std::string resolve = pgmq::core::DeduplicatedResolveSql("q_jobs");
	EXPECT_TRUE(Contains(resolve, "DELETE FROM pgmq.\"q_jobs\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1)")) << resolve;
}

}  // namespace

namespace {

// The policy statements that name queue tables quote them, whatever the name.
TEST(PolicySql, QuoteEveryTableTheyName)
{
	using namespace pgmq::core;
	for (const char *name : {"q_x\"; drop table t; --", "q_with space", "q_$1", "q_select"}) {
		const std::string quoted = QualifiedTable(name);
		for (const std::string &sql : {RedriveSql(name, name), RetentionQueueBatchSql(name),
		                               RetentionArchiveBatchSql(name), DeadLetteredCountSql(name),
		                               DeduplicatedResolveSql(name)}) {
			EXPECT_TRUE(Contains(sql, quoted)) << sql;
			const auto problems = HygieneProblems(sql, kConstants);
			EXPECT_TRUE(problems.empty()) << JoinLines(problems) << "\n" << sql;
		}
	}
}

}  // namespace
