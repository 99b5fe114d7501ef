// include/pgmq/pg/queue.hpp
// A queue argument resolved to its tables. Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

struct QueueRef {
	const char *name;  // the name as the caller gave it (not NUL-terminated)
	int name_len;
	char queue_table[NAMEDATALEN];    // q_<lowercased name>
	char archive_table[NAMEDATALEN];  // a_<lowercased name>
	Oid queue_relid;                  // InvalidOid when the queue table is missing
};

// Reads argument argno as a queue name and derives its table names. ERROR
// (22004) on NULL, (42602) on characters upstream rejects, (42622) when the
// table names cannot be identifiers.
void ReadQueueName(FunctionCallInfo fcinfo, int argno, QueueRef *queue);

// ReadQueueName for create*: the 47-character limit is checked after the
// characters and before the table names, upstream's order.
void ReadNewQueueName(FunctionCallInfo fcinfo, int argno, QueueRef *queue);

// Looks up the queue table of a read name; fills queue_relid.
bool QueueExists(QueueRef *queue);

// For callers that must not fail (the row-security helpers, policy
// maintenance): the queue whose name is the name_len bytes at name (rules as
// ReadQueueName), found by the OID of schema pgmq, never through the
// search_path; false when the name is invalid or the queue table is missing.
// queue points into name, which must outlive it.
bool FindQueueQuietly(const char *name, int name_len, QueueRef *queue);
inline bool FindQueueQuietly(text *name, QueueRef *queue)
{
	return FindQueueQuietly(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name), queue);
}

// ReadQueueName, then requires the queue table to exist: ERROR
// 'queue "x" does not exist' (42P01) otherwise.
void ResolveQueue(FunctionCallInfo fcinfo, int argno, QueueRef *queue);
// The same for a name that is not an argument (an element of one); queue
// points into name, which must outlive it.
void ResolveQueueName(text *name, QueueRef *queue);

// Takes upstream's transaction-scoped advisory lock for this queue name,
// pg_advisory_xact_lock(hashtext('pgmq.queue_' || name)), with the name's
// ASCII letters lowercased as in its table names: create('Jobs') and
// drop_queue('jobs') wait for each other.
void LockQueueName(const QueueRef &queue);

// The owner of relation relid, InvalidOid when it is gone. Never fails.
Oid RelationOwner(Oid relid);
// Whether relid is a table (ordinary or partitioned) and the current role
// has the privileges of its owner. Never fails.
bool OwnsQueueTable(Oid relid);
// ERROR 42501 unless the current role may insert into dead_letter: no role
// makes its readers move messages where it could not put them itself.
void RequireDeadLetterInsert(const QueueRef &dead_letter);
// The queue's name as pgmq.meta has it, as text. ERROR 42P01 when no meta
// row registers it. Requires SPI.
Datum MetaQueueName(const QueueRef &queue);

// ERROR 22004 "<what> cannot be NULL" when argument argno is NULL.
void RequireArgument(FunctionCallInfo fcinfo, int argno, const char *what);

}  // namespace pgmq::pg
