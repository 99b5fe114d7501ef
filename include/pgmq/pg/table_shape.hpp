// include/pgmq/pg/table_shape.hpp
// Never trust a queue table's shape (DESIGN.md, "Trust boundaries"): a role
// with CREATE on schema pgmq, or the table's owner, can make pgmq.q_<name> a
// view, drop a column or change its type. The statements would then read
// values of one type as another. Nor what it carries: VerifyTableShape
// also applies the rule of table_trust.hpp. These checks run when a
// statement is prepared for a queue (plan_cache.cpp), so they cost nothing
// per call. May ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "storage/lockdefs.h"
}

namespace pgmq::pg {

enum class TableRole { Queue, Archive };

// ERROR unless relation `relid`, pgmq.<table>, is what pgmq makes for `role`
// and the current user may run statements on it:
//   42809 not an ordinary or partitioned table (a view, a sequence, ...);
//   42703 one of pgmq's columns is missing (or dropped);
//   42804 one of pgmq's columns has another type;
//   42P16 (queue table) msg_id is not an identity column;
//   42501 it runs another role's code with the caller's rights (the rule of
//         table_trust.hpp).
// Extra columns are allowed: every statement names its columns. The table
// and its tree are first locked with lockmode (the statement's own lock, or
// NoLock when the caller holds it): DDL that would attach code to them
// waits, so what was checked is what the statement runs.
void VerifyTableShape(Oid relid, const char *table, TableRole role, LOCKMODE lockmode = RowExclusiveLock);

// Only the shape, for a statement PostgreSQL runs as the table's owner
// (CREATE INDEX), where the table's code runs with no one else's rights.
void VerifyTableColumns(Oid relid, const char *table, TableRole role);

// The identity sequence of msg_id of queue table `relid` (pgmq.<table>),
// found through pg_depend, never by name: a relation named
// q_<name>_msg_id_seq may be anyone's. ERROR 42P16 when it has none.
Oid MsgIdSequence(Oid relid, const char *table);

// "a view", "a sequence", ... for messages about a relation of that kind.
const char *RelkindName(char relkind);

// ERROR 42501 "permission denied for sequence ..." unless the current role
// may read sequence (SELECT or USAGE), as pg_sequence_last_value checks up
// to PostgreSQL 17; 18's returns NULL instead, which would make metrics
// report 0 messages to a role that may not know.
void RequireSequenceRead(Oid sequence);

}  // namespace pgmq::pg
