// include/pgmq/core/trust.hpp
// The one rule for what a queue's table may carry (docs/permissions.md,
// "Whose code a queue's table may run"). pgmq's functions run with their
// caller's rights, and a table's owner decides what code the table runs
// inside every statement on it: index expressions and predicates that the
// planner folds, defaults, CHECK constraints, triggers, row-security
// policies, rules, statistics expressions, column types, the access method,
// a foreign partition's wrapper. A caller must never run another, weaker
// role's code that way.
//
// The rule reads the catalog: it walks pg_depend from the table, its
// inheritance tree and everything attached to them, and refuses
//   - any object they depend on that is neither built in (OID below
//     kFirstNormalObjectId) nor a member of pgmq or pg_partman, and is not
//     attached to the table itself (a function, type, operator class,
//     collation, access method, foreign server, another table, ...);
//   - any function their stored expressions call that is not IMMUTABLE,
//     built in or not (set_config, query_to_xml, pgmq.purge_queue...),
//     other than the clock (now() and its kin): dependencies on built-in
//     objects are not recorded in pg_depend, so the expressions are read;
//   - a relation of the tree that is not a plain or partitioned table;
// unless the caller runs no one else's code that way: every table of the
// tree, and the object's owner, has the caller's privileges (the owner
// using its own queue).
#pragma once

#include <string>

namespace pgmq::core {

// PostgreSQL's FirstNormalObjectId: objects below it were made by initdb.
constexpr unsigned kFirstNormalObjectId = 16384;

// The rule as one statement: $1 (oid[]) the tables. One row per table the
// current user may not run statements on: root (oid, the table), carrier
// (text, the object attached to it, as pg_describe_object names it) and
// problem (text, what it does, e.g. "calls function pgmq.f(), neither built
// in nor pgmq's"); the first problem found, in a stable order. Read-only,
// catalogs only, every name schema-qualified; index lookups per table, so
// one statement answers for a thousand tables.
std::string ForeignCodeSql();

// The hint of the refusal.
constexpr const char *kForeignCodeHint =
	"pgmq runs no other role's code with its caller's rights: remove it, or call as the table's owner "
	"(docs/permissions.md).";

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
