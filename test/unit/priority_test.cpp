// test/unit/priority_test.cpp
// Message priorities (priority.hpp): which levels and header values are
// accepted, what an error names, and that the expression and its index
// follow the statement rules and match each other.
#include "pgmq/core/priority.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core_error_assert.hpp"
#include "pgmq/core/error.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::CheckPriorityLevels;
using pgmq::core::CheckPriorityValue;
using pgmq::core::ErrorKind;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;
using pgmq_test::ThrowsCoreError;

TEST(PriorityLevels, TwoToTen)
{
	for (int levels : {2, 5, 10})
		EXPECT_NO_THROW(CheckPriorityLevels(levels));
	for (int levels : {-1, 0, 1, 11})
		EXPECT_TRUE(ThrowsCoreError([levels] { CheckPriorityLevels(levels); }, ErrorKind::InvalidParameter,
		                            "levels must be from 2 to 10, got: " + std::to_string(levels)));
}

TEST(PriorityValue, IntegersBelowTheLevels)
{
	for (const char *value : {"0", "1", "2", "2.0", "1.000"})
		EXPECT_NO_THROW(CheckPriorityValue(value, true, 3)) << value;
	EXPECT_NO_THROW(CheckPriorityValue("9", true, 10));
}

TEST(PriorityValue, AnythingElseNamesTheValue)
{
	const struct {
		const char *value;
		bool is_number;
	} refused[] = {{"3", true},     {"-1", true},     {"1.5", true},  {"0.01", true}, {"", true},
	               {"\"1\"", false}, {"null", false}, {"true", false}, {"[1]", false}, {"99999999999999999999", true}};
	for (const auto &r : refused)
		EXPECT_TRUE(ThrowsCoreError([&r] { CheckPriorityValue(r.value, r.is_number, 3); }, ErrorKind::InvalidParameter,
		                            std::string("x-pgmq-priority must be an integer from 0 to 2, got: ") + r.value))
			<< r.value;
}

TEST(PriorityValue, ALongValueIsCut)
{
	const std::string long_value = "\"" + std::string(200, 'x') + "\"";
	EXPECT_TRUE(ThrowsCoreError([&] { CheckPriorityValue(long_value, false, 3); }, ErrorKind::InvalidParameter,
	                            "x-pgmq-priority must be an integer from 0 to 2, got: " + long_value.substr(0, 64) +
	                                "..."));
}

TEST(PrioritySql, FollowsTheStatementRulesAndTheIndexMatchesTheReads)
{
	const std::set<std::string> constants = {"'x-pgmq-priority'", "'number'", "9"};
	const std::string create = pgmq::core::CreatePriorityIndexSql("q_jobs");
	for (const std::string &sql : {pgmq::core::PriorityExpression("headers"), create,
	                               pgmq::core::DropPriorityIndexSql("q_jobs")}) {
		const auto problems = HygieneProblems(sql, constants);
		EXPECT_TRUE(problems.empty()) << JoinLines(problems) << "\n" << sql;
	}
	EXPECT_EQ(create, "CREATE INDEX IF NOT EXISTS \"q_jobs_priority_idx\" ON pgmq.\"q_jobs\" ((" +
	                      pgmq::core::PriorityExpression("headers") + ") DESC, msg_id)");
	EXPECT_EQ(pgmq::core::DropPriorityIndexSql("q_jobs"), "DROP INDEX IF EXISTS pgmq.\"q_jobs_priority_idx\"");
}

}  // namespace
