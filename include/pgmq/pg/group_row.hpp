// include/pgmq/pg/group_row.hpp
// Where each consumer group's row of pgmq.consumer_groups is, so that a
// group's statements fetch it by ctid instead of by its key. Every read and
// acknowledgement rewrites the row; while a snapshot is held, none of its
// old versions can be removed, and a lookup by key steps over all of them
// (the rate falls as the snapshot ages). From the version this backend
// last saw, following the update chain to the newest takes as many steps as
// there were updates since.
//
// The invariant: a location is only where to look. Each statement selects
// the row by `ctid = location AND` the group's key; a row version that is
// not visible to its snapshot, or another group's row, matches nothing, so
// the statement selects the row the key alone would select, or no row.
// When it selects no row, its caller runs the by-key statement instead
// (see entry_stream_read.cpp). docs/architecture.md has the argument.
//
// Backend-local (no shared state), off with pgmq.group_row_hint = off.
// Adapter internals; may ereport.
#pragma once

extern "C" {
#include "postgres.h"
#include "storage/itemptr.h"
}

namespace pgmq::pg {

// _PG_init: the GUC.
void InitGroupRowHints();

// The OID of pgmq.consumer_groups, InvalidOid when there is none.
Oid ConsumerGroupsRelid();

// Sets *location to where the group's row of the stream (its table's OID)
// is now: the newest version visible to a fresh snapshot (the
// transaction's in REPEATABLE READ and SERIALIZABLE) on the update chain
// from where this backend last saw it. When it has not seen it (or the
// hint is off), an invalid ctid (0,0), which matches no row.
void FindGroupRow(Oid stream_relid, Datum group, ItemPointer location);

// Remembers where a statement found or wrote the group's row (a ctid Datum).
void RememberGroupRow(Oid stream_relid, Datum group, Datum ctid);

}  // namespace pgmq::pg
