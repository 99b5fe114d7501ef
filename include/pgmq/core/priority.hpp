// include/pgmq/core/priority.hpp
// Message priorities (docs/delivery.md): a queue with set_priority(q,
// levels) is read highest priority first, then lowest msg_id. A message's
// priority is its header x-pgmq-priority. Sends check it; the statements
// read it through PriorityExpression, which never fails on a row written
// another way (plain SQL), and which an index on the queue table serves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pgmq::core {

constexpr const char *kPriorityHeader = "x-pgmq-priority";
constexpr int64_t kMinPriorityLevels = 2;
constexpr int64_t kMaxPriorityLevels = 10;

// set_priority's levels: 2 to 10, else CoreError(InvalidParameter).
void CheckPriorityLevels(int64_t levels);

// A send's x-pgmq-priority on a queue with `levels` levels: `value` is the
// header's value as JSON text, `is_number` whether it is a JSON number.
// Accepts an integer from 0 to levels - 1 (1.0 is 1); anything else throws
// CoreError(InvalidParameter) naming the value.
void CheckPriorityValue(std::string_view value, bool is_number, int64_t levels);

// The priority of the row whose headers are `headers` (a column reference),
// as SQL: the header's number, floored and clamped to 0..9, or 0 when it is
// missing, not a number, or the headers are not an object. Only immutable
// built-ins, so the priority index can be on it.
std::string PriorityExpression(std::string_view headers);

// The priority index of pgmq.<queue_table>, and its SQL: (priority
// descending, msg_id), the order of a priority read.
std::string PriorityIndexName(std::string_view queue_table);
std::string CreatePriorityIndexSql(std::string_view queue_table);
std::string DropPriorityIndexSql(std::string_view queue_table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
