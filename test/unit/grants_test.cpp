// test/unit/grants_test.cpp
// grant_queue_access's statements: which GRANTs for which needs, quoting of
// role and table names, and refusal when the caller cannot grant.
#include "pgmq/core/grants.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"

#include "core_error_assert.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::CoreError;
using pgmq::core::ErrorKind;
using pgmq::core::GrantCheck;
using pgmq::core::GrantCheckSql;
using pgmq::core::GrantQueueAccessStatements;
using pgmq_test::ThrowsCoreErrorContaining;

const std::vector<std::string> kSomeFunctions = {"pgmq.send(pg_catalog.text,pg_catalog.jsonb)",
                                                  "pgmq.read(pg_catalog.text,integer,integer,pg_catalog.jsonb)"};

GrantCheck AllowedEverything(bool needs_usage, bool needs_execute, std::string sequence)
{
	return {needs_usage, needs_execute ? kSomeFunctions : std::vector<std::string>{}, std::move(sequence), true, true,
	        true, true, true, "", false, true};
}

TEST(GrantQueueAccess, GrantsOnlyWhatIsMissing)
{
	const auto statements =
		GrantQueueAccessStatements("jobs", "app", true, AllowedEverything(false, false, "pgmq.q_jobs_msg_id_seq"));
	const std::vector<std::string> expected = {
		"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE pgmq.\"q_jobs\" TO \"app\"",
		"GRANT SELECT ON SEQUENCE pgmq.q_jobs_msg_id_seq TO \"app\"",
		"GRANT SELECT, INSERT ON TABLE pgmq.\"a_jobs\" TO \"app\"",
	};
	EXPECT_EQ(statements, expected);
}

TEST(GrantQueueAccess, SchemaAndFunctionsFirstWhenMissing)
{
	// Only the routines the check listed (pgmq's own), never the whole schema.
	const auto statements = GrantQueueAccessStatements("jobs", "app", false, AllowedEverything(true, true, ""));
	const std::vector<std::string> expected = {
		"GRANT USAGE ON SCHEMA pgmq TO \"app\"",
		"GRANT EXECUTE ON ROUTINE pgmq.send(pg_catalog.text,pg_catalog.jsonb), "
		"pgmq.read(pg_catalog.text,integer,integer,pg_catalog.jsonb) TO \"app\"",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE pgmq.\"q_jobs\" TO \"app\"",
	};
	EXPECT_EQ(statements, expected);
}

TEST(GrantQueueAccess, QuotesRoleAndQueue)
{
	const auto statements =
		GrantQueueAccessStatements("My\"Queue", "odd\" role; DROP TABLE x", false, AllowedEverything(false, false, ""));
	ASSERT_EQ(statements.size(), 1u);
	EXPECT_EQ(statements[0],
	          "GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE pgmq.\"q_my\"\"queue\" TO \"odd\"\" role; DROP TABLE x\"");
}

TEST(GrantQueueAccess, RefusesWhatTheCallerCannotGrant)
{
	for (int denied = 0; denied < 5; ++denied) {
		GrantCheck check = AllowedEverything(true, true, "pgmq.q_jobs_msg_id_seq");
		bool *flags[] = {&check.can_grant_schema_usage, &check.can_grant_function_execute, &check.can_grant_queue,
		                 &check.can_grant_sequence, &check.can_grant_archive};
		*flags[denied] = false;
		EXPECT_TRUE(ThrowsCoreErrorContaining([&] { GrantQueueAccessStatements("jobs", "app", true, check); },
		                                      ErrorKind::PermissionDenied, "queue \"jobs\""))
			<< "flag " << denied << " false";
	}
}

TEST(GrantQueueAccess, UnneededRightsAreNotRequired)
{
	// A caller who cannot grant the schema or the archive still serves a role
	// that has USAGE already and does not archive.
	GrantCheck check = AllowedEverything(false, false, "");
	check.can_grant_schema_usage = false;
	check.can_grant_function_execute = false;
	check.can_grant_archive = false;
	EXPECT_EQ(GrantQueueAccessStatements("jobs", "app", false, check).size(), 1u);
}

TEST(GrantQueueAccess, CheckIsQualifiedAndParameterised)
{
	const std::string sql = GrantCheckSql();
	EXPECT_NE(sql.find("$1"), std::string::npos);
	EXPECT_NE(sql.find("$2"), std::string::npos);
	EXPECT_NE(sql.find("$3"), std::string::npos);
	// Every function call pg_catalog-qualified, every operator OPERATOR(pg_catalog.x).
	for (const char *function : {"has_schema_privilege(", "has_function_privilege(", "has_table_privilege(",
	                             "has_sequence_privilege(", "pg_get_serial_sequence(", "bool_and("}) {
		std::size_t at = 0;
		while ((at = sql.find(function, at)) != std::string::npos) {
			EXPECT_EQ(sql.compare(at - 11, 11, "pg_catalog."), 0) << function << " unqualified in " << sql;
			at += 1;
		}
	}
	EXPECT_EQ(sql.find(" = "), std::string::npos);
	// The same rules every core statement follows; the literals are privilege
	// names and fixed identifiers, not values.
	const std::set<std::string> constants = {"'USAGE'", "'EXECUTE'", "'pgmq'", "'msg_id'", "'e'",
	                                         "'pg_catalog.pg_proc'", "'pg_catalog.pg_extension'",
	                                         "'USAGE WITH GRANT OPTION'", "'EXECUTE WITH GRANT OPTION'",
	                                         "'SELECT WITH GRANT OPTION'", "'INSERT WITH GRANT OPTION'",
	                                         "'UPDATE WITH GRANT OPTION'", "'DELETE WITH GRANT OPTION'", "'INSERT'"};
	// Only the extension's members are checked, not every function in the schema.
	EXPECT_NE(sql.find("d.deptype OPERATOR(pg_catalog.=) 'e'"), std::string::npos) << sql;
	EXPECT_EQ(sql.find("pronamespace"), std::string::npos) << sql;
	EXPECT_TRUE(pgmq_test::HygieneProblems(sql, constants).empty())
		<< pgmq_test::JoinLines(pgmq_test::HygieneProblems(sql, constants)) << "\n" << sql;
}

}  // namespace
