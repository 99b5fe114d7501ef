// include/pgmq/pg/executor.hpp
// SPI plumbing for the entry points: connect/finish, running cached and
// one-shot statements with return-code checks, and materialized results.
// All functions may ereport.
#pragma once

#include <string>

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "executor/spi.h"
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// SPI_connect / SPI_finish. On the error path abort cleans up SPI: never
// finish there. nonatomic: a procedure's connection that may SPI_commit
// (only when NonAtomicCall).
void SpiConnect(bool nonatomic = false);
void SpiFinish();

// Whether the procedure was called with CALL outside a transaction block
// (or from a procedure that was), where it may commit.
bool NonAtomicCall(FunctionCallInfo fcinfo);

// Runs a kept plan (read_only = false: each run takes a fresh snapshot, so a
// poll sees sends committed meanwhile). Returns the number of rows; they are
// in SPI_tuptable.
// An error's context names the queue and the step, not the statement's SQL
// (ShortenPlanContext).
uint64 ExecutePlan(SPIPlanPtr plan, Datum *values, const char *nulls);

// In an error raised while `plan` ran: the context line with the plan's SQL
// text becomes "pgmq: <step> queue "<name>"" (plan_cache.hpp's
// DescribeCachedPlan), or goes. May ereport.
void ShortenPlanContext(ErrorData *error, SPIPlanPtr plan);

// From C++ code inside RunCore: runs a one-shot statement (DDL and other
// rare work that is not worth a cached plan), with values as parameters.
// Returns SPI_processed. May throw (PostgresError, CoreError); an error's
// context leaves out the statement's SQL.
uint64 ExecuteOnce(const std::string &sql, int nargs = 0, Oid *types = nullptr, Datum *values = nullptr,
                   const char *nulls = nullptr);

// From C++ code: text Datum of s in the current memory context. May throw.
Datum TextDatum(const std::string &s);

// Prepares the materialized result of a set-returning function. Call first,
// before SPI_connect, so the tuplestore belongs to the caller's query.
void BeginRowsResult(FunctionCallInfo fcinfo);

// Reading an SPI result by position trusts its column types: a queue table
// whose column was ALTERed to another type would be misread (a text read as
// jsonb crashes the backend). So every value read by position from a
// table's columns, and every row stored as a function's result, goes through
// these checks; a column whose type the statement's own SQL fixes (a cast, a
// count, a boolean test) needs none. `table` names the pgmq table the
// columns come from (q_x, unquoted) for the message; nullptr when there is
// none.

// ERROR 42804 unless column `column` (1-based) of `actual` has type `expected`.
void RequireColumnType(TupleDesc actual, int column, Oid expected, const char *table);

// ERROR 42804 unless `actual` has the columns and column types of `expected`.
void RequireRowType(TupleDesc actual, TupleDesc expected, const char *table);

// Column `column` (1-based) of row `row` of the last SPI result, checked to
// be of type `expected` first.
Datum ResultValue(uint64 row, int column, Oid expected, bool *isnull, const char *table = nullptr);

// Appends every row of the last SPI result to the function's result, after
// RequireRowType against the function's result descriptor.
void EmitRows(FunctionCallInfo fcinfo, const char *table = nullptr);

// The visibility time `seconds` from now, as clock_timestamp() + seconds.
inline TimestampTz SecondsFromNow(TimestampTz now, int32 seconds)
{
	return now + static_cast<int64>(seconds) * USECS_PER_SEC;
}

// 'n' or ' ', SPI's null flags.
inline char NullFlag(bool isnull) { return isnull ? 'n' : ' '; }

}  // namespace pgmq::pg
