// include/pgmq/pg/stream_plans.hpp
// Kept plans of the statements of a consumer group's read and
// acknowledgement (core/streams.hpp), per stream table for those that name
// it. As plan_cache.hpp: Postgres' plan cache re-analyses a kept plan when
// a relation it uses changes, or the role or search_path it was planned
// for; this only saves parsing and planning on every call. Few entries (at
// most five per stream), so no eviction. Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/queue.hpp"

extern "C" {
#include "executor/spi.h"
}

namespace pgmq::pg {

enum class StreamStatement : unsigned char {
	LockGroup,        // core::LockGroupSql(false): at a location (group_row.hpp)
	LockGroupByKey,   // core::LockGroupSql(true)
	GroupState,       // core::GroupStateSql(false): at a location
	GroupStateByKey,  // core::GroupStateSql(true)
	Window,         // core::WindowMessagesSql(table, false)
	WindowCut,      // core::WindowMessagesSql(table, true)
	RecordLease,    // core::RecordLeaseSql
	Emit,           // core::EmitSql(table)
	Renew,          // core::RenewLeaseSql
	Anchor,         // core::AnchorSql
	Ack,            // core::AckSql
	LeaseOf,        // core::LeaseOfSql
	Release,        // core::ReleaseSql
	Count
};

// Runs statement (its parameters as its core SQL documents them) with the
// kept plan for the stream, prepared on first use; returns SPI_processed.
// Call within InStreamScope (stream.hpp), with SPI connected.
uint64 ExecuteStreamStatement(const QueueRef &stream, StreamStatement statement, Datum *values,
                              const char *nulls = nullptr);

}  // namespace pgmq::pg
