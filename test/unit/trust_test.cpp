// test/unit/trust_test.cpp
// The statement of the rule for what a queue's table may carry
// (include/pgmq/core/trust.hpp): safe under any search_path, one parameter,
// and reading every catalog where a table keeps code. What it decides is
// tested against a server (sql/table_trust.sql, test/integration/trap_sweep.py).
#include "pgmq/core/trust.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sql_lexer.hpp"

namespace {

using pgmq::core::ForeignCodeSql;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

// The literals that are fixed parts of the rule, not values.
const std::set<std::string> kConstants = {
	std::to_string(pgmq::core::kFirstNormalObjectId),
	"2",  // a problem's rank
	"'pg_catalog.pg_class'",
	"'pg_catalog.pg_attrdef'",
	"'pg_catalog.pg_constraint'",
	"'pg_catalog.pg_policy'",
	"'pg_catalog.pg_trigger'",
	"'pg_catalog.pg_rewrite'",
	"'pg_catalog.pg_statistic_ext'",
	"'pg_catalog.pg_namespace'",
	"'pg_catalog.pg_extension'",
	"'pg_catalog.pg_proc'",
	"'pg_catalog.pg_type'",
	"'pg_catalog.pg_operator'",
	"'pg_catalog.pg_opclass'",
	"'pg_catalog.pg_opfamily'",
	"'pg_catalog.pg_collation'",
	"'pg_catalog.pg_foreign_server'",
	"'{a,i,P,S}'",
	"'{pg_class,pg_type,pg_constraint,pg_attrdef,pg_trigger,pg_policy,pg_rewrite,pg_statistic_ext}'",
	"'{pgmq,pg_partman}'",
	"'{e,x}'",
	"'e'",
	"'i'",
	"'{r,p}'",
	"'USAGE'",
	"':(?:funcid|opfuncid|hashfuncid|negfuncid|aggfnoid|winfnoid) ([0-9]+)'",
	"'g'",
	"'{pg_catalog.now(),pg_catalog.transaction_timestamp(),pg_catalog.pg_current_xact_id(),"
	"pg_catalog.statement_timestamp(),pg_catalog.clock_timestamp()}'",
	"'calls '",
	"'refers to '",
	"'uses '",
	"', neither built in nor pgmq''s'",
	"'calls function '",
	"', which is not immutable'",
	"'is not a plain or partitioned table'",
};

TEST(ForeignCodeSql, IsSafeUnderAnySearchPath)
{
	const std::string sql = ForeignCodeSql();
	EXPECT_TRUE(HygieneProblems(sql, kConstants).empty()) << JoinLines(HygieneProblems(sql, kConstants)) << "\n" << sql;
}

TEST(ForeignCodeSql, TakesTheTablesAsItsOnlyParameter)
{
	const std::string sql = ForeignCodeSql();
	EXPECT_EQ(pgmq_test::Params(sql), (std::set<int>{1}));
	EXPECT_TRUE(Contains(sql, "c.oid OPERATOR(pg_catalog.=) ANY ($1)")) << sql;
	// One answer per table at most: its first problem, in a stable order.
	EXPECT_TRUE(Contains(sql, "SELECT DISTINCT ON (p.root) p.root, p.carrier, p.problem FROM problems")) << sql;
	EXPECT_TRUE(Contains(sql, "ORDER BY p.root, p.rank, p.carrier, p.problem")) << sql;
}

TEST(ForeignCodeSql, WalksTheTreeAndWhatIsAttachedToIt)
{
	const std::string sql = ForeignCodeSql();
	EXPECT_TRUE(Contains(sql, "WITH RECURSIVE ")) << sql;
	// Partitions and inheritance children, at any depth.
	EXPECT_TRUE(Contains(sql, "pg_catalog.pg_inherits")) << sql;
	// Attached objects: automatic, internal and partition dependencies.
	EXPECT_TRUE(Contains(sql, "'{a,i,P,S}'")) << sql;
	// What they use: anything recorded in pg_depend but extension membership.
	EXPECT_TRUE(Contains(sql, "ALL ('{e,x}'")) << sql;
}

TEST(ForeignCodeSql, ReadsEveryStoredExpression)
{
	const std::string sql = ForeignCodeSql();
	for (const char *column : {"a.adbin", "c.conbin", "i.indexprs", "i.indpred", "o.polqual", "o.polwithcheck",
	                           "g.tgqual", "r.ev_qual", "r.ev_action", "s.stxexprs", "k.partexprs"})
		EXPECT_TRUE(Contains(sql, column)) << column;
	// Every way a node tree names a function.
	for (const char *field : {"funcid", "opfuncid", "hashfuncid", "negfuncid", "aggfnoid", "winfnoid"})
		EXPECT_TRUE(Contains(sql, std::string("|") + field) || Contains(sql, std::string(":(?:") + field)) << field;
	EXPECT_TRUE(Contains(sql, "f.provolatile OPERATOR(pg_catalog.<>) 'i'")) << sql;
}

TEST(ForeignCodeSql, TrustsOnlyBuiltInObjectsAndTheTwoExtensions)
{
	const std::string sql = ForeignCodeSql();
	EXPECT_TRUE(Contains(sql, "d.refobjid OPERATOR(pg_catalog.>=) " +
	                              std::to_string(pgmq::core::kFirstNormalObjectId) + "::pg_catalog.oid"))
		<< sql;
	EXPECT_TRUE(Contains(sql, "'{pgmq,pg_partman}'::pg_catalog.name[]")) << sql;
	// The clock and the transaction id (a stream's xid column) are the only
	// non-immutable calls allowed in an expression.
	EXPECT_TRUE(Contains(sql, "'{pg_catalog.now(),pg_catalog.transaction_timestamp(),pg_catalog.pg_current_xact_id(),"
	                          "pg_catalog.statement_timestamp(),pg_catalog.clock_timestamp()}'::pg_catalog.regprocedure[]"))
		<< sql;
}

TEST(ForeignCodeSql, ExcusesOnlyCodeRunningAsItsOwnersOwnRights)
{
	const std::string sql = ForeignCodeSql();
	// Every table of the tree, and the object's owner, must have the
	// caller's privileges (not the other way round: a superuser has every
	// role's privileges, and must still be refused).
	EXPECT_TRUE(Contains(sql, "pg_catalog.bool_and(pg_catalog.pg_has_role((SELECT c.relowner")) << sql;
	EXPECT_TRUE(Contains(sql, "CURRENT_USER, 'USAGE')) AS ok FROM tree AS t GROUP BY t.root")) << sql;
	EXPECT_TRUE(Contains(sql, "pg_catalog.pg_has_role(p.owner, CURRENT_USER, 'USAGE')")) << sql;
}

}  // namespace
