// src/pg/entry_meta.cpp
// pgmq._is_queue_owner(queue_name): the row-level security policy of
// pgmq.meta. Every queue owner may write pgmq.meta (create and drop_queue
// do), but only the rows of its own queues: a row is allowed when its name
// is a valid queue name and the current role has the privileges of the
// owner of that queue's table. Superusers and meta's owner (the extension's
// installer) bypass the policy, so pg_dump and restore are unaffected.
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

// _is_queue_owner(queue_name text) -> boolean, STRICT STABLE. The queue
// table is found by the OID of schema pgmq and its name, never through the
// search_path.
PGMQ_FUNCTION(pgmq_is_queue_owner)
{
	QueueRef queue;
	if (!FindQueueQuietly(PG_GETARG_TEXT_PP(0), &queue))
		PG_RETURN_BOOL(false);
	HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(queue.queue_relid));
	if (!HeapTupleIsValid(tuple))
		PG_RETURN_BOOL(false);
	const char relkind = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relkind;
	const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	PG_RETURN_BOOL((relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) &&
	               has_privs_of_role(GetUserId(), owner));
}
