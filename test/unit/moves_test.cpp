// test/unit/moves_test.cpp
// The SQL of move and unarchive (moves.hpp): the statement rules every
// statement follows, quoted table names, and what each one keeps.
#include "pgmq/core/moves.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sql_lexer.hpp"

namespace {

using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

// The header's name and keys, and 'object' (jsonb_typeof): fixed parts, not values.
const std::set<std::string> kConstants = {"'x-pgmq-moved-from'", "'queue'", "'msg_id'", "'headers'", "'object'"};

TEST(MovesSql, FollowsTheStatementRules)
{
	for (const std::string &sql : {pgmq::core::MoveSql("q_jobs", "q_other"), pgmq::core::UnarchiveSql("q_jobs", "a_jobs")}) {
		const auto problems = HygieneProblems(sql, kConstants);
		EXPECT_TRUE(problems.empty()) << JoinLines(problems) << "\n" << sql;
	}
}

TEST(MovesSql, MoveDeletesFromTheSourceAndSendsToTheTarget)
{
	const std::string sql = pgmq::core::MoveSql("q_jobs", "q_other");
	EXPECT_TRUE(Contains(sql, "DELETE FROM pgmq.\"q_jobs\" AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1)")) << sql;
	// New ids in the target: msg_id is not inserted.
	EXPECT_TRUE(Contains(sql, "INSERT INTO pgmq.\"q_other\" (vt, message, headers) SELECT $2, m.message, ")) << sql;
	EXPECT_TRUE(Contains(sql, "'queue', $3::pg_catalog.text, 'msg_id', m.msg_id")) << sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY m.msg_id RETURNING msg_id")) << sql;
}

TEST(MovesSql, UnarchiveKeepsIdsAndCounts)
{
	const std::string sql = pgmq::core::UnarchiveSql("q_jobs", "a_jobs");
	EXPECT_TRUE(Contains(sql, "DELETE FROM pgmq.\"a_jobs\" AS a WHERE a.msg_id OPERATOR(pg_catalog.=) ANY ($1)")) << sql;
	EXPECT_TRUE(Contains(sql, "INSERT INTO pgmq.\"q_jobs\" (msg_id, read_ct, enqueued_at, last_read_at, message, "
	                          "headers, vt) OVERRIDING SYSTEM VALUE"))
		<< sql;
	EXPECT_TRUE(Contains(sql, ", $2 FROM restored")) << sql;
}

}  // namespace
