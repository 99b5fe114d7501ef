// test/unit/dead_letters_test.cpp
// Dead letters and failure reasons (dead_letters.hpp): redrive picks only
// the source queue's dead letters, in their original order; a failure is
// appended to a bounded history; a dead letter records why it was moved;
// and every statement follows the hygiene rules of the others.
#include "pgmq/core/dead_letters.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"
#include "sql_lexer.hpp"

namespace {

using namespace pgmq::core;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;

const std::set<std::string> kConstants = {"'x-pgmq-dead-letter'", "'x-pgmq-failures'", "'queue'", "'msg_id'",
                                          "'headers'", "'object'", "'array'", "'number'", "'{}'", "'[]'",
                                          "'reason'", "'at'", "'read_ct'", "'enqueued_at'", "'moved_at'",
                                          "'max_deliveries reached'", std::to_string(kMaxReasonLength),
                                          std::to_string(kMaxFailures)};

bool Contains(const std::string &haystack, const std::string &needle) { return haystack.find(needle) != std::string::npos; }

TEST(Redrive, MovesOnlyTheDeadLettersOfTheQueueInTheirOriginalOrder)
{
	const std::string sql = RedriveSql("q_shared_dlq", "q_jobs");
	// The pick filters on the header's source queue ($3) before its LIMIT.
	const std::size_t filter = sql.find("'x-pgmq-dead-letter' OPERATOR(pg_catalog.->>) 'queue' OPERATOR(pg_catalog.=) $3");
	ASSERT_NE(filter, std::string::npos) << sql;
	EXPECT_LT(filter, sql.find("LIMIT $1")) << sql;
	// Original order: the id the message had in its queue, then the dead-letter queue's.
	EXPECT_TRUE(Contains(sql, "ORDER BY CASE WHEN pg_catalog.jsonb_typeof(")) << sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY m.original_id, m.msg_id")) << sql;
	EXPECT_TRUE(Contains(sql, "DELETE FROM pgmq.\"q_shared_dlq\"")) << sql;
	EXPECT_TRUE(Contains(sql, "INSERT INTO pgmq.\"q_jobs\"")) << sql;
}

TEST(FailureHistory, AppendsOneEntryAndKeepsTheNewestFew)
{
	const std::string sql = FailureAppendedSql("q.headers", "$6", "$2", "q.read_ct");
	EXPECT_TRUE(Contains(sql, "CASE WHEN $6 IS NULL OR ")) << sql;  // no reason: headers unchanged
	EXPECT_TRUE(Contains(sql, "pg_catalog.jsonb_build_object('reason', pg_catalog.substr($6, 1, " +
	                              std::to_string(kMaxReasonLength) + "), 'at', $2, 'read_ct', q.read_ct)"))
		<< sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY e.ord DESC LIMIT " + std::to_string(kMaxFailures))) << sql;
	EXPECT_TRUE(Contains(sql, "jsonb_agg(f.value ORDER BY f.ord)")) << sql;
	EXPECT_EQ(std::string(kFailuresHeader), "x-pgmq-failures");
}

TEST(DeadLetterHeaders, RecordWhyAndWhence)
{
	const std::string sql = DeadLetterHeadersSql("$5::pg_catalog.text", "$1", "$9");
	for (const char *field : {"'queue', $5::pg_catalog.text", "'msg_id', m.msg_id", "'read_ct', m.read_ct",
	                          "'enqueued_at', m.enqueued_at", "'moved_at', $1", "'reason', pg_catalog.substr($9, 1, "})
		EXPECT_TRUE(Contains(sql, field)) << field << "\n" << sql;
	// The read's own move gives its reason.
	const std::string claim = DeadLetterSql(Statement::ReadDeadLetter, "q_jobs", "q_dlq");
	EXPECT_TRUE(Contains(claim, std::string("'") + kDeliveryLimitReason + "'::pg_catalog.text")) << claim;
}

TEST(DeadLetterNow, MovesTheGivenIdsWithTheirReason)
{
	const std::string sql = DeadLetterNowSql("q_jobs", "q_dlq");
	EXPECT_TRUE(Contains(sql, "DELETE FROM pgmq.\"q_jobs\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1)")) << sql;
	EXPECT_TRUE(Contains(sql, "INSERT INTO pgmq.\"q_dlq\"")) << sql;
	EXPECT_TRUE(Contains(sql, "'reason', pg_catalog.substr($4::pg_catalog.text, 1, ")) << sql;
}

TEST(DeadLetterSql, FollowsTheHygieneRulesAndQuotesEveryTable)
{
	for (const char *name : {"q_jobs", "q_x\"; drop table t; --", "q_with space"}) {
		for (const std::string &sql : {RedriveSql(name, name), DeadLetterNowSql(name, name), DeadLetterSourcesSql(name),
		                               "SELECT " + FailureAppendedSql("q.headers", "$1", "$2", "q.read_ct") + " FROM pgmq.meta AS q"}) {
			const auto problems = HygieneProblems(sql, kConstants);
			EXPECT_TRUE(problems.empty()) << JoinLines(problems) << "\n" << sql;
			if (!Contains(sql, "FROM pgmq.meta AS q")) {
				EXPECT_TRUE(Contains(sql, QualifiedTable(name))) << sql;
			}
		}
	}
}

}  // namespace
