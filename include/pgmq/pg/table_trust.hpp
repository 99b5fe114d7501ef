// include/pgmq/pg/table_trust.hpp
// Running the rule for what a queue's table may carry (core/trust.hpp):
// before pgmq plans or runs a statement on a queue or archive table as its
// caller, the table must run no other role's code with the caller's rights.
// VerifyTableShape (table_shape.hpp) calls it, so every path that verifies a
// table checks it; the plan cache keeps the answer per plan and user.
// Adapter functions; may ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "storage/lockdefs.h"
}

namespace pgmq::pg {

// ERROR 42501 "<kind> "pgmq.<table>" carries <object>, which <problem>"
// unless the current user may run statements on relation relid without
// running another role's code. Lock the table (and its tree, LockTree)
// first: what was checked is then what runs. A pass is remembered per table
// and user until the table, a table of its tree, or a role changes.
void RequireOwnCodeOnly(Oid relid, const char *kind, const char *table);

// A table the rule refuses: what it carries and what that does (palloc'd
// in the caller's memory context).
struct ForeignCode {
	Oid relid;
	char *carrier;  // "index pgmq.q_x_idx", as pg_describe_object says
	char *problem;  // "calls function pgmq.f(), neither built in nor pgmq's"
};

// The rule for count tables at once: fills found (room for count) with the
// refused ones and returns how many. Passes are remembered as above; the
// others are looked up in one statement. Opens its own SPI connection (an
// outer one's results stay as they were).
int CheckTables(const Oid *relids, int count, ForeignCode *found);

// Moves whenever a remembered pass may have gone stale without an
// invalidation of the table itself (a partition or inheritance child
// changed, a role or a membership changed): caches of verified plans compare
// it with the value they were verified under.
uint64 TrustGeneration();

// Locks the tables inheriting from relid (partitions at any depth), when it
// has any, with lockmode: DDL that would attach code to one of them then
// waits for this transaction. The caller holds a lock on relid.
void LockTree(Oid relid, LOCKMODE lockmode);

// _PG_init: the invalidation callbacks.
void InitTableTrust();

}  // namespace pgmq::pg
