// include/pgmq/pg/deduplication.hpp
// send and send_batch on a queue with a deduplication policy: a message whose
// headers carry x-pgmq-deduplication-id equal to one sent to the queue within
// the window is not inserted, and its send returns the first message's
// msg_id (core/statements.hpp: SendDeduplicated, SendBatchDeduplicated,
// DeduplicatedResolve). Adapter internals: may ereport; require SPI.
#pragma once

#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "utils/array.h"
#include "utils/jsonb.h"
}

namespace pgmq::pg {

// Whether headers (may be nullptr) carry a deduplication id (not JSON null).
bool HasDeduplicationId(Jsonb *headers);

// The send: (msg, headers, vt) as Send's values; appends the msg_id to the
// function's result.
void SendDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy, Datum *values,
                      const char *nulls);

// The batch: (msgs, headers, vt) as SendBatch's values; appends one msg_id
// per element, in order.
void SendBatchDeduplicated(FunctionCallInfo fcinfo, const QueueRef &queue, const QueuePolicy &policy, Datum *values,
                           const char *nulls);

}  // namespace pgmq::pg
