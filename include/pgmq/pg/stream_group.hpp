// include/pgmq/pg/stream_group.hpp
// What the consumer group entry points share (entry_stream_read.cpp: reads;
// entry_stream_ack.cpp: acknowledgements, set_aside, release): the reader
// of one call, and locking, acknowledging and setting aside under the
// group's lock. Call with SPI connected, within InStreamScope (stream.hpp).
// Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "fmgr.h"
#include "storage/itemptr.h"
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// One call's view of a consumer group.
struct GroupReader {
	FunctionCallInfo fcinfo;
	QueueRef stream;
	Datum name;
	Datum group;
	int32 vt_seconds;
	int32 qty;
	bool paused;  // seen paused: read the policy row again (a resume wakes before its invalidation)
	ItemPointerData row;  // where the group's row was last found or written (group_row.hpp)
};

// t as seconds since the Unix epoch (the leases' deadlines).
double EpochSeconds(TimestampTz t);

// The group's row is at ctid (a tid Datum), found or written by the last
// statement: its later statements select it there (group_row.hpp).
void FoundAt(GroupReader *read, Datum ctid);

// Where the group's row was last found or written, as a tid Datum.
Datum RowLocation(GroupReader *read);

// ERROR 42501 unless the current role may read as the group, whose state
// (GroupStateSql) is the last result.
void RequireReaderOfState(const GroupReader &read);

// Locks the group row (LockGroupSql: where this session last saw it, else
// by key), then reads its state (GroupStateSql) into the last result;
// ERROR 42704 when there is no such group, 42501 when the role may not read
// as it.
void LockGroup(GroupReader *read, TimestampTz now);

// Ends the group's leases on ids (int8[]); the ids it held are the last
// result's first column. The group row must be locked.
uint64 AckIds(GroupReader *read, Datum ids);

// Copies the messages ids (int8[]) to the dead-letter queue `dead_letter`
// (text) with the group, the reason (NULL: none) and their deliveries.
void SetAside(const GroupReader &read, Datum dead_letter, Datum ids, Datum reason, int32 deliveries);

// Resolves (stream, group) of the calls that act on leases, with the right
// to read the stream they need.
void ResolveGroup(FunctionCallInfo fcinfo, GroupReader *read);

}  // namespace pgmq::pg
