// src/pg/entry_meta.cpp
// pgmq._is_queue_owner(queue_name): the row-level security policy of
// pgmq.meta (and of deleting a row of pgmq.policies), and
// pgmq._policy_row_allowed, that of writing a row of pgmq.policies. Every queue owner may write pgmq.meta (create and drop_queue
// do), but only the rows of its own queues: a row is allowed when its name
// is a valid queue name and the current role has the privileges of the
// owner of that queue's table. Superusers and meta's owner (the extension's
// installer) bypass the policy, so pg_dump and restore are unaffected.
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/acl.h"
}

using namespace pgmq;
using namespace pgmq::pg;

// _is_queue_owner(queue_name text) -> boolean, STRICT STABLE. The queue
// table is found by the OID of schema pgmq and its name, never through the
// search_path.
PGMQ_FUNCTION(pgmq_is_queue_owner)
{
	QueueRef queue;
	PG_RETURN_BOOL(FindQueueQuietly(PG_GETARG_TEXT_PP(0), &queue) && OwnsQueueTable(queue.queue_relid));
}

// _policy_row_allowed(queue_name text, queue_relid regclass, dead_letter_queue
// text, dead_letter_relid regclass) -> boolean, STABLE: the row is for the
// current table of a queue the role owns, and its dead-letter queue (if
// any) is the current table of a queue the role may insert into, as
// set_dead_letter_queue requires. So a direct INSERT or UPDATE can neither
// pin a policy to a table that is not the queue's nor point dead letters
// at a queue its writer could not send to.
PGMQ_FUNCTION(pgmq_policy_row_allowed)
{
	QueueRef queue;
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || !FindQueueQuietly(PG_GETARG_TEXT_PP(0), &queue) ||
	    queue.queue_relid != PG_GETARG_OID(1) || !OwnsQueueTable(queue.queue_relid))
		PG_RETURN_BOOL(false);
	// A dead-letter queue dropped with drop_queue leaves its name NULL (the
	// foreign key's SET NULL) and its OID behind, which nothing reads.
	if (PG_ARGISNULL(2))
		PG_RETURN_BOOL(true);
	QueueRef dead_letter;
	PG_RETURN_BOOL(!PG_ARGISNULL(3) && FindQueueQuietly(PG_GETARG_TEXT_PP(2), &dead_letter) &&
	               dead_letter.queue_relid == PG_GETARG_OID(3) &&
	               pg_class_aclcheck(dead_letter.queue_relid, GetUserId(), ACL_INSERT) == ACLCHECK_OK);
}
