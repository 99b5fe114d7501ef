// include/pgmq/pg/queue_relations.hpp
// What create* may find under a queue's names before it builds anything.
// A tenant with CREATE on schema pgmq can make pgmq.q_<name> (with a trigger
// that runs as whoever inserts) before an administrator creates the queue;
// create* must never adopt such a relation. Adapter internals; may ereport.
#pragma once

#include "pgmq/core/ddl.hpp"

#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

// How pgmq.meta registers the queue's tables (core::QueueRegisteredSql):
// under which name, and whether that row outlived its queue table (which a
// tenant can drop with DROP TABLE): create* then forgets the old queue's
// rows instead of adopting them. Requires SPI; may ereport.
struct Registration {
	bool registered;  // a live row: the queue exists under `name`
	bool stale;       // a row whose queue table is gone
	Datum name;       // text, the registered name (when registered)
};
Registration FindRegistration(QueueRef *queue);

// create* after its tables exist: forgets a stale registration, then
// registers the queue unless it already was. Runs inside RunCore (may throw).
void RegisterQueue(const Registration &registration, Datum name, bool partitioned, bool unlogged);

// Deletes the queue's meta rows (any spelling of name), and with them its
// policies, topic bindings and notification settings (foreign keys), and
// its deduplication ids: drop_queue, and create* of a queue whose rows
// outlived its table. The caller must own the queue table (row-level
// security). Runs inside RunCore (may throw).
void ForgetQueueRows(Datum name);

// ERROR 42501 "permission denied for schema pgmq" unless the current role
// has CREATE on it, which create* needs even for an existing queue (as
// CREATE TABLE IF NOT EXISTS does); checked before anything else.
void RequireCreateOnSchema();

// ERROR 42501 "must be owner of table ..." unless the current role owns
// the relation (or has the privileges of its owner).
void RequireRelationOwner(Oid relid);

// Checks every relation create* makes for the queue (tables, indexes, the
// identity sequence, primary keys; partman's default partitions too when
// partitioned and not registered) and records in existing which ones are
// there. Each existing one must be of the kind pgmq makes under its name (a
// table, an index, a sequence) and belong to the caller: its owner, a role
// the caller has the privileges of, or, for a superuser caller, a superuser
// or a role it is really a member of (MayAdoptRelation). A superuser never
// adopts a relation an ordinary role prepared: its triggers would run as
// superuser. Otherwise:
//   - not registered: ERROR 42P07, the relation "was not created by
//     pgmq.create" for this queue (the caller's own tables, e.g. left by DROP
//     EXTENSION, are registered again, as upstream does);
//   - registered: ERROR 42501, the queue belongs to another role.
void CheckRelationsForCreate(const QueueRef &queue, bool partitioned, bool registered,
                             core::ExistingRelations *existing);

// Whether the current role may treat a relation owned by owner as its own
// (the rule above).
bool MayAdoptRelation(Oid owner);

}  // namespace pgmq::pg
