// relay/src/log.hpp
// One line per event on stderr (line breaks folded), with a UTC timestamp;
// safe from any thread.
#pragma once

#include <string>

namespace pgmq::relay {

void LogInfo(const std::string &message);
void LogWarning(const std::string &message);
void LogError(const std::string &message);

}  // namespace pgmq::relay
