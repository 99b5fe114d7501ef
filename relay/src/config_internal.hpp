// relay/src/config_internal.hpp
// What the configuration's three sources share: the file (config.cpp), the
// command line (command_line.cpp) and the environment with the checks of
// the whole (config_checks.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "pgmq/relay/config.hpp"

namespace pgmq::relay::config_detail {

[[noreturn]] void Fail(const std::string &where, const std::string &what);
std::string Path(const std::string &where, const std::string &key);
// A queue name pgmq accepts (characters, length).
void CheckQueueName(const std::string &name, const std::string &where);
// AMQP short strings (exchange, routing key) hold at most 255 bytes.
void CheckShortString(const std::string &value, const std::string &where);

constexpr std::int64_t kMinBatchBytes = 1024;
constexpr std::int64_t kMaxBatchBytes = 1024LL * 1024 * 1024;

}  // namespace pgmq::relay::config_detail
