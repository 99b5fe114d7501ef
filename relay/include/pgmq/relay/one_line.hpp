// relay/include/pgmq/relay/one_line.hpp
// The log is one line per event; libpq's errors come in several lines
// ("FATAL: ...\nserver closed the connection...\n\tThis probably means...").
#pragma once

#include <string>
#include <string_view>

namespace pgmq::relay {

// text on one line: each line break with the blanks around it becomes "; ",
// trailing breaks and blanks are dropped.
std::string OneLine(std::string_view text);

}  // namespace pgmq::relay
