// include/pgmq/pg/message_args.hpp
// Decoding the arguments every send-like function shares (send, send_batch,
// send_topic, send_batch_topic, every overload): optional headers, a delay in
// seconds or until a time, and message arrays. May ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "utils/array.h"
#include "utils/timestamp.h"
}

namespace pgmq::pg {

// Where an overload keeps its optional arguments (-1: not in this overload).
struct SendArgs {
	int headers;
	int delay_seconds;
	int delay_until;
};

// The vt of a send: now, now + delay seconds, or the given timestamp.
// ERROR 22004 on a NULL delay.
TimestampTz SendVisibleAt(FunctionCallInfo fcinfo, const SendArgs &args);

// Array argument argno, detoasted, or nullptr when NULL or not in this overload.
ArrayType *ArrayArgument(FunctionCallInfo fcinfo, int argno);

// Upstream's batch checks: msgs non-empty, headers (when given) as long,
// both one-dimensional.
void CheckBatchArguments(ArrayType *msgs, ArrayType *headers);

}  // namespace pgmq::pg
