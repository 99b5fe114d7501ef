// include/pgmq/core/grants.hpp
// Access for one queue (pgmq.grant_queue_access): what an application role
// needs to send, read, delete and archive on queue "x" (docs/permissions.md):
//   - USAGE on schema pgmq, and EXECUTE on pgmq's own functions (the
//     members of the pgmq extension, never other functions that roles with
//     CREATE on the schema put there), unless it has them already (PUBLIC
//     has EXECUTE by default);
//   - SELECT, INSERT, UPDATE, DELETE on pgmq.q_x;
//   - SELECT on q_x's msg_id sequence, for metrics' total_messages (sends
//     draw ids from the identity column, which needs no sequence privilege);
//   - SELECT, INSERT on pgmq.a_x when the role archives;
//   - INSERT on the queue's dead-letter queue, when it has one: a read moves
//     the messages at the delivery limit there, as its reader.
// Identifiers are always quoted. The caller must be able to grant all of it:
// a partial grant would leave a role that fails at its first archive.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pgmq::core {

// What the role lacks and what the caller may grant, as GrantCheckSql finds.
struct GrantCheck {
	bool needs_schema_usage;             // the role lacks USAGE on schema pgmq
	std::vector<std::string> functions;  // pgmq's own routines the role lacks EXECUTE on, as qualified signatures
	std::string sequence;                // the queue's msg_id sequence, quoted and qualified; empty: none
	bool can_grant_schema_usage;         // the caller holds each of these WITH GRANT OPTION (or owns the object)
	bool can_grant_function_execute;     // ... EXECUTE on each of `functions`
	bool can_grant_queue;
	bool can_grant_sequence;
	bool can_grant_archive;
	std::string dead_letter_table;       // the dead-letter queue's table, quoted and qualified; empty: none
	bool has_dead_letter_insert;         // the role may insert into it already
	bool can_grant_dead_letter;
};

// Number of columns GrantCheckSql returns, in GrantCheck's order.
constexpr int kGrantCheckColumns = 10;

// One row of GrantCheck's columns but dead_letter_table for ($1 role oid,
// $2 queue table, $3 archive table, $4 dead-letter queue table or NULL;
// tables as quoted, qualified names). Column 2, `functions`,
// is an oid[] of the routines; the adapter formats their signatures.
std::string GrantCheckSql();

// The GRANT statements for role_name (as the role is named; quoted here) on
// queue_name's tables, in the order they run. May throw
// CoreError(PermissionDenied) when the caller cannot grant one of them.
std::vector<std::string> GrantQueueAccessStatements(std::string_view queue_name, std::string_view role_name,
                                                    bool archive, const GrantCheck &check);

// set_dead_letter_queue: ($1 queue table, $2 dead-letter queue table, as
// regclass) -> each role (as GRANT names it: quoted, or PUBLIC) that holds
// UPDATE on the queue table by a grant (its readers, the owner aside) and
// may not insert into the dead-letter queue, and whether the caller may
// grant INSERT on it.
std::string DeadLetterReadersSql();

// GRANT INSERT on dead_letter_table (quoted, qualified) to the roles (as
// DeadLetterReadersSql names them). Throws CoreError(PermissionDenied),
// naming them, when the caller cannot grant it.
std::string GrantDeadLetterInsertStatement(std::string_view queue_name, const std::string &dead_letter_table,
                                           const std::vector<std::string> &roles, bool can_grant);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
