// include/pgmq/pg/policy_cache.hpp
// Each queue's delivery policies (core/policy.hpp), read from pgmq.policies
// once per backend and queue and kept next to the prepared plans. A queue
// without a policy costs one hash lookup per call, no statement. The set_*
// and clear_* functions invalidate the queue table's relcache entry, so every
// backend drops its copy when that transaction commits (its own at once),
// and reads the row again on next use; so does any ALTER or DROP of the
// queue's or its dead-letter queue's table. Adapter internals: may ereport.
#pragma once

#include "pgmq/core/statements.hpp"

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "datatype/timestamp.h"
#include "executor/spi.h"
}

namespace pgmq::pg {

struct QueuePolicy {
	bool exists;                       // the queue has a row in pgmq.policies
	char queue_name[NAMEDATALEN];      // as pgmq.meta has it
	bool dead_letter;                  // dead-letter queue and max_deliveries set
	int32 max_deliveries;
	char dead_letter_queue[NAMEDATALEN];
	bool retry_backoff;
	int32 retry_base_seconds;
	int32 retry_max_seconds;
	bool deduplication;
	Interval deduplication_window;
	bool retention;                    // retention_max_age set
	Interval retention_max_age;
	bool archive_retention;            // retention_archive_max_age set
	Interval retention_archive_max_age;
	bool paused;                       // pgmq.pause: every read returns nothing
	int32 priority_levels;             // set_priority: reads take higher priorities first; 0: off
};

// Whether this database's pgmq has the policy tables (pgmq.policies and
// pgmq.deduplication): a library newer than the extension's SQL objects
// (before ALTER EXTENSION pgmq UPDATE) finds none, and then every queue
// simply has no policy.
bool PolicyTablesExist();

// The policies of a resolved queue, into *policy. Requires SPI; reads the
// policy row (one statement) only when this backend has no valid copy.
void LoadPolicy(const QueueRef &queue, QueuePolicy *policy);

// As LoadPolicy, but always reads the row again (a new snapshot): for a
// poll woken by a resume, whose wake-up (at commit) comes before the
// invalidation it sent reaches this backend.
void ReloadPolicy(const QueueRef &queue, QueuePolicy *policy);

// The queue's name as pgmq.meta has it, for every role that may use the
// queue, also one without SELECT on pgmq.meta (grant_queue_access does not
// give it): the name in its policy row when it has one (pgmq.policies is
// readable by every role, and its names are meta's), else meta's when the
// caller may read it, else the name as given. Requires SPI.
Datum QueueNameAsCreated(const QueueRef &queue);

// DescribeCachedPlan (plan_cache.hpp) for the kept dead-letter claims.
bool DescribeDeadLetterPlan(SPIPlanPtr plan, const char **queue_table, core::Statement *statement);

// The dead-letter queue of queue: the OID of its table, whose name goes
// into dead_letter_table (NAMEDATALEN bytes). ERROR 55000 when the queue
// has no dead-letter policy, 42P01 when the table is gone, 42501 when the
// queue's owner or the current role may not insert into it. Requires SPI.
Oid RequireDeadLetterQueue(const QueueRef &queue, char *dead_letter_table);

// The kept plan of the dead-letter claim `claim` (core::IsDeadLetterClaim)
// for queue, whose policy LoadPolicy found to have a dead-letter queue;
// prepared on first use, after checking the shapes of both queue tables.
// ERROR 42P01 when the dead-letter queue's table is gone. Sets
// *dead_letter_relid to that table. Requires SPI.
SPIPlanPtr DeadLetterPlan(const QueueRef &queue, core::Statement claim, Oid *dead_letter_relid);

// Relcache invalidation of relid (InvalidOid: every relation): the copies
// that depend on it are read again on next use. Called from the plan
// cache's relcache callback; never ereports.
void ForgetPolicies(Oid relid);

// _PG_init: frees replaced plans at transaction end.
void InitPolicyCache();

}  // namespace pgmq::pg
