// src/pg/message_args.cpp
// Shared argument decoding of the send-like functions (see message_args.hpp).
#include "pgmq/core/arguments.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/message_args.hpp"
#include "pgmq/pg/queue.hpp"

namespace pgmq::pg {

namespace {

// Number of elements of a message or header array (0 for NULL).
int64 ArrayLength(ArrayType *array)
{
	if (!array)
		return 0;
	if (ARR_NDIM(array) > 1)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("message arrays must be one-dimensional")));
	return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
}

}  // namespace

TimestampTz SendVisibleAt(FunctionCallInfo fcinfo, const SendArgs &args)
{
	const TimestampTz now = GetCurrentTimestamp();
	if (args.delay_seconds >= 0) {
		RequireArgument(fcinfo, args.delay_seconds, "delay");
		return SecondsFromNow(now, PG_GETARG_INT32(args.delay_seconds));
	}
	if (args.delay_until >= 0) {
		RequireArgument(fcinfo, args.delay_until, "delay");
		return PG_GETARG_TIMESTAMPTZ(args.delay_until);
	}
	return now;
}

ArrayType *ArrayArgument(FunctionCallInfo fcinfo, int argno)
{
	return argno < 0 || PG_ARGISNULL(argno) ? nullptr : PG_GETARG_ARRAYTYPE_P(argno);
}

void CheckBatchArguments(ArrayType *msgs, ArrayType *headers)
{
	const int64 msgs_count = ArrayLength(msgs);
	const int64 headers_count = ArrayLength(headers);
	RunCore([&] { core::CheckBatch(!msgs, msgs_count, !headers, headers_count); });
}

}  // namespace pgmq::pg
