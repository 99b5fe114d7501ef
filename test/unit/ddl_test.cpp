// test/unit/ddl_test.cpp
// Queue lifecycle DDL (API.md §1.2, §2.2, §2.8): statement order, table and
// index names, column lists, UNLOGGED, the meta row, drop and purge.
#include "pgmq/core/ddl.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pgmq/core/queue_name.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::CountQueueSql;
using pgmq::core::CreateQueueStatements;
using pgmq::core::DeleteMetaSql;
using pgmq::core::DropQueueStatements;
using pgmq::core::ExistingRelations;
using pgmq::core::InsertMetaSql;
using pgmq::core::LockQueueTableSql;
using pgmq::core::QueueKind;
using pgmq::core::SetSequenceLoggedSql;
using pgmq::core::TruncateQueueSql;
using pgmq::core::UnloggedSequenceSql;
using pgmq_test::HygieneProblems;
using pgmq_test::JoinLines;

const ExistingRelations kAllExist{true, true, true, true};

bool Contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

bool StartsWith(const std::string &text, const std::string &prefix) { return text.rfind(prefix, 0) == 0; }

// The column definitions of a CREATE TABLE, split at top-level commas.
std::vector<std::string> ColumnDefinitions(const std::string &create_table)
{
	// The column list: from the first "(" to its matching ")", before any WITH (...).
	const std::size_t open = create_table.find('(');
	const std::size_t with = create_table.find(") WITH (");
	const std::size_t close = with != std::string::npos ? with : create_table.rfind(')');
	std::vector<std::string> out;
	if (open == std::string::npos || close == std::string::npos || close < open)
		return out;
	int depth = 0;
	std::string current;
	for (std::size_t i = open + 1; i < close; ++i) {
		const char c = create_table[i];
		if (c == ',' && depth == 0) {
			out.push_back(current);
			current.clear();
			continue;
		}
		depth += c == '(' ? 1 : c == ')' ? -1 : 0;
		if (!(current.empty() && c == ' '))
			current.push_back(c);
	}
	out.push_back(current);
	return out;
}

std::vector<std::string> ColumnNames(const std::string &create_table)
{
	std::vector<std::string> names;
	for (const std::string &definition : ColumnDefinitions(create_table))
		names.push_back(definition.substr(0, definition.find(' ')));
	return names;
}

std::string Definition(const std::string &create_table, const std::string &column)
{
	for (const std::string &definition : ColumnDefinitions(create_table))
		if (StartsWith(definition, column + " "))
			return definition;
	return "";
}

const char *const kHostileNames[] = {
	"QueueCased", "queue-hyphened", "with space.and.dots", "x\"; DROP TABLE t; --", "\"", "select",
	"\xC3\x89t\xC3\xA9",
};

// ---------------------------------------------------------------------------
// CreateQueueStatements

TEST(CreateQueueStatements, UpstreamOrderAndNames)
{
	const std::vector<std::string> statements = CreateQueueStatements("QueueCased", QueueKind::Logged, kAllExist);
	ASSERT_EQ(statements.size(), 3u);
	EXPECT_TRUE(StartsWith(statements[0], "CREATE TABLE IF NOT EXISTS pgmq.\"q_queuecased\" (")) << statements[0];
	EXPECT_TRUE(StartsWith(statements[1], "CREATE TABLE IF NOT EXISTS pgmq.\"a_queuecased\" (")) << statements[1];
	// The archive index keeps the raw, not lowercased, name (upstream quirk).
	EXPECT_EQ(statements[2],
	          "CREATE INDEX IF NOT EXISTS \"archived_at_idx_QueueCased\" ON pgmq.\"a_queuecased\" (archived_at)");
}

TEST(CreateQueueStatements, QueueTableHasNoVtIndexAndRoomForHotUpdates)
{
	const std::vector<std::string> statements = CreateQueueStatements("orders", QueueKind::Logged, kAllExist);
	for (const std::string &statement : statements)
		EXPECT_FALSE(Contains(statement, "(vt")) << "reads never use a vt index: " << statement;
	const std::string suffix = ") WITH (fillfactor = 80)";
	EXPECT_EQ(statements[0].substr(statements[0].size() - suffix.size()), suffix) << statements[0];
	EXPECT_FALSE(Contains(statements[1], "fillfactor")) << "archived rows are never updated: " << statements[1];
}

TEST(CreateQueueStatements, QueueTableColumnsInMessageRecordOrder)
{
	const std::string q = CreateQueueStatements("orders", QueueKind::Logged, kAllExist)[0];
	EXPECT_EQ(ColumnNames(q),
	          (std::vector<std::string>{"msg_id", "read_ct", "enqueued_at", "last_read_at", "vt", "message", "headers"}))
		<< q;
	EXPECT_EQ(Definition(q, "msg_id"), "msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY");
	EXPECT_EQ(Definition(q, "read_ct"), "read_ct INT DEFAULT 0 NOT NULL");
	EXPECT_EQ(Definition(q, "enqueued_at"), "enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL");
	EXPECT_EQ(Definition(q, "last_read_at"), "last_read_at TIMESTAMP WITH TIME ZONE");
	EXPECT_EQ(Definition(q, "vt"), "vt TIMESTAMP WITH TIME ZONE NOT NULL");
	EXPECT_EQ(Definition(q, "message"), "message pg_catalog.jsonb");
	EXPECT_EQ(Definition(q, "headers"), "headers pg_catalog.jsonb");
}

TEST(CreateQueueStatements, ArchiveTableColumnsWithArchivedAtAfterLastReadAt)
{
	const std::string a = CreateQueueStatements("orders", QueueKind::Logged, kAllExist)[1];
	EXPECT_EQ(ColumnNames(a), (std::vector<std::string>{"msg_id", "read_ct", "enqueued_at", "last_read_at",
	                                                    "archived_at", "vt", "message", "headers"}))
		<< a;
	// Archived ids come from the queue: a primary key, no identity.
	EXPECT_EQ(Definition(a, "msg_id"), "msg_id BIGINT PRIMARY KEY");
	EXPECT_EQ(Definition(a, "archived_at"), "archived_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL");
	EXPECT_EQ(Definition(a, "vt"), "vt TIMESTAMP WITH TIME ZONE NOT NULL");
	EXPECT_EQ(Definition(a, "last_read_at"), "last_read_at TIMESTAMP WITH TIME ZONE");
	EXPECT_EQ(Definition(a, "message"), "message pg_catalog.jsonb");
	EXPECT_EQ(Definition(a, "headers"), "headers pg_catalog.jsonb");
}

TEST(CreateQueueStatements, UnloggedMakesOnlyTheQueueTableUnlogged)
{
	const std::vector<std::string> logged = CreateQueueStatements("orders", QueueKind::Logged, kAllExist);
	const std::vector<std::string> unlogged = CreateQueueStatements("orders", QueueKind::Unlogged, kAllExist);
	ASSERT_EQ(unlogged.size(), 3u);
	EXPECT_TRUE(StartsWith(unlogged[0], "CREATE UNLOGGED TABLE IF NOT EXISTS pgmq.\"q_orders\" (")) << unlogged[0];
	for (const std::string &statement : logged)
		EXPECT_FALSE(Contains(statement, "UNLOGGED")) << statement;
	for (std::size_t i = 1; i < unlogged.size(); ++i)
		EXPECT_FALSE(Contains(unlogged[i], "UNLOGGED")) << unlogged[i];
	// Otherwise identical.
	std::string first = unlogged[0];
	first.erase(first.find("UNLOGGED "), 9);
	EXPECT_EQ(first, logged[0]);
	for (std::size_t i = 1; i < logged.size(); ++i)
		EXPECT_EQ(unlogged[i], logged[i]);
}

TEST(CreateQueueStatements, IfNotExistsOnlyForRelationsThatExist)
{
	// Existing (checked) relations keep IF NOT EXISTS, so an idempotent create
	// is a no-op with upstream's NOTICEs; a missing one gets a plain CREATE,
	// so a relation someone else makes meanwhile is an error, not adopted.
	for (QueueKind kind : {QueueKind::Logged, QueueKind::Unlogged}) {
		for (const std::string &statement : CreateQueueStatements("orders", kind, kAllExist))
			EXPECT_TRUE(Contains(statement, " IF NOT EXISTS ")) << statement;
		for (const std::string &statement : CreateQueueStatements("orders", kind, ExistingRelations{}))
			EXPECT_FALSE(Contains(statement, "IF NOT EXISTS")) << statement;
		for (int only = 0; only < 3; ++only) {
			ExistingRelations existing;
			bool *flags[] = {&existing.queue_table, &existing.archive_table, &existing.archive_index};
			*flags[only] = true;
			const std::vector<std::string> statements = CreateQueueStatements("orders", kind, existing);
			ASSERT_EQ(statements.size(), 3u);
			for (int i = 0; i < 3; ++i)
				EXPECT_EQ(Contains(statements[i], " IF NOT EXISTS "), i == only) << statements[i];
		}
	}
	const std::vector<std::string> fresh = CreateQueueStatements("orders", QueueKind::Unlogged, ExistingRelations{});
	EXPECT_TRUE(StartsWith(fresh[0], "CREATE UNLOGGED TABLE pgmq.\"q_orders\" (")) << fresh[0];
	EXPECT_TRUE(StartsWith(fresh[1], "CREATE TABLE pgmq.\"a_orders\" (")) << fresh[1];
	EXPECT_EQ(fresh[2], "CREATE INDEX \"archived_at_idx_orders\" ON pgmq.\"a_orders\" (archived_at)");
}

TEST(QueueRegisteredSql, MatchesEverySpellingOfTheSameTables)
{
	const std::string sql = pgmq::core::QueueRegisteredSql();
	// ASCII-only lowercasing (the "C" collation), as TableName.
	EXPECT_NE(sql.find("pg_catalog.lower(queue_name::pg_catalog.text COLLATE pg_catalog.\"C\")"), std::string::npos)
		<< sql;
	EXPECT_NE(sql.find("pg_catalog.lower($1 COLLATE pg_catalog.\"C\")"), std::string::npos) << sql;
	EXPECT_EQ(pgmq_test::MaxParam(sql), 1);
	EXPECT_TRUE(HygieneProblems(sql).empty()) << JoinLines(HygieneProblems(sql));
}

TEST(CreateQueueStatements, HostileNamesStayQuoted)
{
	for (const char *name : kHostileNames) {
		const std::string raw = name;
		const std::string lower = pgmq::core::TableName("q", raw).substr(2);
		const std::vector<std::string> statements = CreateQueueStatements(raw, QueueKind::Unlogged, kAllExist);
		ASSERT_EQ(statements.size(), 3u);
		const std::vector<std::vector<std::string>> expected_identifiers = {
			{"q_" + lower},
			{"a_" + lower},
			{"archived_at_idx_" + raw, "a_" + lower},
		};
		for (std::size_t i = 0; i < statements.size(); ++i) {
			const std::vector<std::string> problems =
				HygieneProblems(statements[i], {std::to_string(pgmq::core::kQueueFillfactor)});
			EXPECT_TRUE(problems.empty()) << raw << ":" << JoinLines(problems) << "\n" << statements[i];
			EXPECT_EQ(pgmq_test::QuotedIdentifiers(statements[i]), expected_identifiers[i]) << statements[i];
			EXPECT_FALSE(Contains(pgmq_test::Skeleton(statements[i]), raw)) << statements[i];
			EXPECT_TRUE(pgmq_test::Params(statements[i]).empty()) << statements[i];
		}
	}
}

TEST(CreateQueueStatements, StructureDoesNotDependOnTheName)
{
	for (QueueKind kind : {QueueKind::Logged, QueueKind::Unlogged}) {
		const std::vector<std::string> reference = CreateQueueStatements("orders", kind, kAllExist);
		for (const char *name : kHostileNames) {
			const std::vector<std::string> statements = CreateQueueStatements(name, kind, kAllExist);
			ASSERT_EQ(statements.size(), reference.size());
			for (std::size_t i = 0; i < statements.size(); ++i)
				EXPECT_EQ(pgmq_test::Skeleton(statements[i]), pgmq_test::Skeleton(reference[i])) << name;
		}
	}
}

// ---------------------------------------------------------------------------
// Meta row

TEST(MetaSql, InsertTakesTheThreeValuesAsParameters)
{
	const std::string sql = InsertMetaSql();
	EXPECT_EQ(sql,
	          "INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING");
	EXPECT_EQ(pgmq_test::MaxParam(sql), 3);
	EXPECT_TRUE(HygieneProblems(sql).empty()) << JoinLines(HygieneProblems(sql));
}

TEST(MetaSql, DeleteMatchesEverySpellingAndReturnsTheNames)
{
	const std::string sql = DeleteMetaSql();
	EXPECT_EQ(sql, "DELETE FROM pgmq.meta WHERE pg_catalog.lower(queue_name::pg_catalog.text COLLATE pg_catalog.\"C\") "
	               "OPERATOR(pg_catalog.=) pg_catalog.lower($1 COLLATE pg_catalog.\"C\") RETURNING "
	               "queue_name::pg_catalog.text");
	EXPECT_EQ(pgmq_test::MaxParam(sql), 1);
	EXPECT_TRUE(HygieneProblems(sql).empty()) << JoinLines(HygieneProblems(sql));
}

// ---------------------------------------------------------------------------
// drop / purge

TEST(DropQueueStatements, DropsQueueThenArchiveByLowercasedName)
{
	EXPECT_EQ(DropQueueStatements("QueueCased"),
	          (std::vector<std::string>{"DROP TABLE IF EXISTS pgmq.\"q_queuecased\"",
	                                    "DROP TABLE IF EXISTS pgmq.\"a_queuecased\""}));
}

TEST(DropQueueStatements, HostileNamesStayQuoted)
{
	for (const char *name : kHostileNames) {
		const std::string lower = pgmq::core::TableName("q", name).substr(2);
		const std::vector<std::string> statements = DropQueueStatements(name);
		ASSERT_EQ(statements.size(), 2u);
		EXPECT_EQ(pgmq_test::QuotedIdentifiers(statements[0]), std::vector<std::string>{"q_" + lower});
		EXPECT_EQ(pgmq_test::QuotedIdentifiers(statements[1]), std::vector<std::string>{"a_" + lower});
		for (const std::string &statement : statements) {
			EXPECT_TRUE(HygieneProblems(statement).empty()) << JoinLines(HygieneProblems(statement)) << "\n" << statement;
			EXPECT_FALSE(Contains(statement, "CASCADE")) << statement;
		}
	}
}

TEST(PurgeSql, CountsThenTruncatesTheQueueTableOnly)
{
	EXPECT_EQ(CountQueueSql("QueueCased"), "SELECT pg_catalog.count(*) FROM pgmq.\"q_queuecased\"");
	// No RESTART IDENTITY: msg_ids keep growing after a purge.
	EXPECT_EQ(TruncateQueueSql("QueueCased"), "TRUNCATE pgmq.\"q_queuecased\"");
	for (const char *name : kHostileNames) {
		for (const std::string &sql : {CountQueueSql(name), TruncateQueueSql(name)}) {
			EXPECT_TRUE(HygieneProblems(sql).empty()) << JoinLines(HygieneProblems(sql)) << "\n" << sql;
			const std::vector<std::string> quoted = pgmq_test::QuotedIdentifiers(sql);
			ASSERT_EQ(quoted.size(), 1u) << sql;
			EXPECT_EQ(quoted[0], pgmq::core::TableName("q", name)) << sql;
		}
	}
}

// purge_queue locks first, so its count is what TRUNCATE deletes
// (purge_during_read.spec shows the concurrent send counted).
TEST(PurgeSql, LocksTheQueueTableBeforeCounting)
{
	EXPECT_EQ(LockQueueTableSql("QueueCased"), "LOCK TABLE pgmq.\"q_queuecased\" IN ACCESS EXCLUSIVE MODE");
	for (const char *name : kHostileNames) {
		const std::string sql = LockQueueTableSql(name);
		EXPECT_TRUE(HygieneProblems(sql).empty()) << JoinLines(HygieneProblems(sql)) << "\n" << sql;
		const std::vector<std::string> quoted = pgmq_test::QuotedIdentifiers(sql);
		ASSERT_EQ(quoted.size(), 1u) << sql;
		EXPECT_EQ(quoted[0], pgmq::core::TableName("q", name)) << sql;
	}
}

// create_unlogged makes the queue's identity sequence logged, so msg_ids
// survive a crash (crash_safety.py); only an unlogged sequence is found.
TEST(UnloggedSequence, FindsTheQueueTablesSequenceOnlyWhileUnlogged)
{
	const std::string sql = UnloggedSequenceSql();
	EXPECT_TRUE(HygieneProblems(sql, {"'msg_id'", "'u'"}).empty())
		<< JoinLines(HygieneProblems(sql, {"'msg_id'", "'u'"})) << "\n" << sql;
	EXPECT_TRUE(Contains(sql, "pg_catalog.pg_get_serial_sequence($1, 'msg_id')")) << sql;
	EXPECT_TRUE(Contains(sql, "relpersistence OPERATOR(pg_catalog.=) 'u'")) << sql;
	EXPECT_EQ(SetSequenceLoggedSql("pgmq.\"q_x_msg_id_seq\""), "ALTER SEQUENCE pgmq.\"q_x_msg_id_seq\" SET LOGGED");
}

}  // namespace
