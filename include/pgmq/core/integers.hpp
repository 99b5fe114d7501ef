// include/pgmq/core/integers.hpp
// Integers read from text the way PostgreSQL's int8/int4 input reads them:
// intervals, retentions and partition bounds arrive as text (arguments,
// part_config), and "is it an integer" decides how a queue is partitioned.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pgmq::core {

// An integer as int8 input reads it (blanks around it, a sign); nullopt
// otherwise, including on overflow.
std::optional<int64_t> ParseInt8(std::string_view text);

// The same for int4. Upstream decides "integer interval" by exactly this cast.
std::optional<int32_t> ParseInt4(std::string_view text);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
