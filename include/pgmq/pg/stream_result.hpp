// include/pgmq/pg/stream_result.hpp
// Running a cached plan with its rows going straight into the function's
// materialized result, instead of through SPI_tuptable: memory stays bounded
// (the result's tuplestore spills to disk beyond work_mem) however many rows
// the statement returns. For statements whose row count the caller chooses,
// such as send_batch's.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "executor/spi.h"
}

namespace pgmq::pg {

// Runs plan (read_only = false, as ExecutePlan) and appends its rows to the
// result BeginRowsResult prepared. Each row's columns must have the types of
// the function's result, checked once before the first row is stored: ERROR
// 42804 otherwise (a queue table's columns may have been altered). Returns
// the number of rows; with first_value, sets it to the first row's first
// column (an int8), if any. Requires SPI. May ereport.
uint64 ExecutePlanIntoResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values, const char *nulls,
                             int64 *first_value = nullptr);

}  // namespace pgmq::pg
