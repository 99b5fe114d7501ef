// include/pgmq/pg/priority.hpp
// The send-side check of message priorities (core/priority.hpp): on a queue
// with `levels` levels, a header x-pgmq-priority that is not an integer from
// 0 to levels - 1 is an ERROR 22023 naming the value; no header (or headers
// that are no object) means priority 0. Adapter internals: may ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

extern "C" {
#include "utils/array.h"
#include "utils/jsonb.h"
}

namespace pgmq::pg {

void CheckPriorityHeader(Jsonb *headers, int32 levels);

// Every element of a headers array (NULL elements have no header).
void CheckPriorityHeaders(ArrayType *headers, int32 levels);

}  // namespace pgmq::pg
