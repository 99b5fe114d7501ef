// src/core/grants.cpp
// GRANT statements of grant_queue_access (see grants.hpp). May throw
// CoreError and std::bad_alloc.
#include "pgmq/core/grants.hpp"

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

// Every privilege in the list held WITH GRANT OPTION on object $n.
std::string CanGrant(const char *function, const char *object, std::initializer_list<const char *> privileges)
{
	std::string all;
	for (const char *privilege : privileges) {
		if (!all.empty())
			all += " AND ";
		all += std::string("pg_catalog.") + function + "(" + object + ", '" + privilege + " WITH GRANT OPTION')";
	}
	return all;
}

void RequireGrantable(bool can_grant, std::string_view queue_name, const std::string &what)
{
	if (!can_grant)
		throw CoreError(ErrorKind::PermissionDenied, "permission denied to grant access to queue \"" +
		                                                 std::string(queue_name) + "\": cannot grant " + what);
}

}  // namespace

std::string GrantCheckSql()
{
	// Functions and operators qualified: the caller's search_path must not
	// decide what this checks. The sequence name comes back quoted by Postgres.
	// pgmq's own routines are the extension's members (pg_depend 'e'): a
	// function someone else put in schema pgmq is neither checked nor granted.
	const std::string lacking =
		"FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid "
		"WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass "
		"AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass "
		"AND d.deptype OPERATOR(pg_catalog.=) 'e' AND d.refobjid OPERATOR(pg_catalog.=) "
		"(SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'pgmq') "
		"AND NOT pg_catalog.has_function_privilege($1, p.oid, 'EXECUTE')";
	return "SELECT NOT pg_catalog.has_schema_privilege($1, n.oid, 'USAGE'), "
	       "ARRAY(SELECT p.oid " + lacking + " ORDER BY p.oid), s.seq, " +
	       CanGrant("has_schema_privilege", "n.oid", {"USAGE"}) + ", COALESCE((SELECT pg_catalog.bool_and(" +
	       CanGrant("has_function_privilege", "p.oid", {"EXECUTE"}) + ") " + lacking + "), true), " +
	       CanGrant("has_table_privilege", "$2", {"SELECT", "INSERT", "UPDATE", "DELETE"}) + ", COALESCE(" +
	       CanGrant("has_sequence_privilege", "s.seq", {"SELECT"}) + ", true), " +
	       CanGrant("has_table_privilege", "$3", {"SELECT", "INSERT"}) + ", " +
	       "pg_catalog.has_table_privilege($1, $4, 'INSERT'), " + CanGrant("has_table_privilege", "$4", {"INSERT"}) +
	       " FROM pg_catalog.pg_namespace n, pg_catalog.pg_get_serial_sequence($2, 'msg_id') AS s(seq) "
	       "WHERE n.nspname OPERATOR(pg_catalog.=) 'pgmq'";
}

std::vector<std::string> GrantQueueAccessStatements(std::string_view queue_name, std::string_view role_name,
                                                    bool archive, const GrantCheck &check)
{
	const std::string role = QuoteIdentifier(role_name);
	std::vector<std::string> statements;
	if (check.needs_schema_usage) {
		RequireGrantable(check.can_grant_schema_usage, queue_name, "USAGE on schema pgmq");
		statements.push_back("GRANT USAGE ON SCHEMA pgmq TO " + role);
	}
	if (!check.functions.empty()) {
		RequireGrantable(check.can_grant_function_execute, queue_name, "EXECUTE on pgmq's functions");
		std::string routines;
		for (const std::string &function : check.functions)
			routines += (routines.empty() ? "" : ", ") + function;
		statements.push_back("GRANT EXECUTE ON ROUTINE " + routines + " TO " + role);
	}
	const std::string queue_table = QualifiedTable(TableName("q", queue_name));
	RequireGrantable(check.can_grant_queue, queue_name, "SELECT, INSERT, UPDATE, DELETE on " + queue_table);
	statements.push_back("GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE " + queue_table + " TO " + role);
	if (!check.sequence.empty()) {
		RequireGrantable(check.can_grant_sequence, queue_name, "SELECT on " + check.sequence);
		statements.push_back("GRANT SELECT ON SEQUENCE " + check.sequence + " TO " + role);
	}
	if (archive) {
		const std::string archive_table = QualifiedTable(TableName("a", queue_name));
		RequireGrantable(check.can_grant_archive, queue_name, "SELECT, INSERT on " + archive_table);
		statements.push_back("GRANT SELECT, INSERT ON TABLE " + archive_table + " TO " + role);
	}
	if (!check.dead_letter_table.empty() && !check.has_dead_letter_insert) {
		RequireGrantable(check.can_grant_dead_letter, queue_name,
		                 "INSERT on " + check.dead_letter_table + ", its dead-letter queue");
		statements.push_back("GRANT INSERT ON TABLE " + check.dead_letter_table + " TO " + role);
	}
	return statements;
}

std::string DeadLetterReadersSql()
{
	// PUBLIC's grants have grantee 0, which has_table_privilege names 'public'.
	return "SELECT DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname) "
	       "END, pg_catalog.has_table_privilege($2, 'INSERT WITH GRANT OPTION') "
	       "FROM pg_catalog.pg_class c CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a "
	       "LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee "
	       "WHERE c.oid OPERATOR(pg_catalog.=) $1 AND a.privilege_type OPERATOR(pg_catalog.=) 'UPDATE' "
	       "AND a.grantee OPERATOR(pg_catalog.<>) c.relowner AND NOT pg_catalog.has_table_privilege("
	       "CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'public' ELSE r.rolname::pg_catalog.text END, $2, 'INSERT') "
	       "ORDER BY 1";
}

std::string GrantDeadLetterInsertStatement(std::string_view queue_name, const std::string &dead_letter_table,
                                           const std::vector<std::string> &roles, bool can_grant)
{
	std::string grantees;
	for (const std::string &role : roles)
		grantees += (grantees.empty() ? "" : ", ") + role;
	if (!can_grant)
		throw CoreError(ErrorKind::PermissionDenied,
		                "permission denied to set the dead-letter queue of queue \"" + std::string(queue_name) +
		                    "\": its readers " + grantees + " could not move messages there, and the caller cannot "
		                    "grant them INSERT on " + dead_letter_table);
	return "GRANT INSERT ON TABLE " + dead_letter_table + " TO " + grantees;
}

}  // namespace pgmq::core
