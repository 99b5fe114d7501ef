// relay/src/config_json.hpp
// Reading the configuration file's JSON values: each reader leaves out
// untouched when the key is absent and fails with the key's path and what
// was expected when it has the wrong type or range. Shared by the top level
// and the broker (config.cpp) and the sources (config_sources.cpp).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pgmq/relay/config.hpp"

namespace pgmq::relay::config_detail {

// Rejects keys that are not in allowed: a typo must not be silently ignored.
void CheckKeys(const nlohmann::json &object, const std::string &where, const std::set<std::string> &allowed);
void ReadString(const nlohmann::json &object, const std::string &where, const char *key, std::string &out);
void ReadInt(const nlohmann::json &object, const std::string &where, const char *key, int min, int max, int &out);
void ReadInt64(const nlohmann::json &object, const std::string &where, const char *key, std::int64_t min,
			   std::int64_t max, std::int64_t &out);
// A non-empty array of strings.
void ReadStringList(const nlohmann::json &object, const std::string &where, const char *key,
					std::vector<std::string> &out);
void ReadBool(const nlohmann::json &object, const std::string &where, const char *key, bool &out);

// One item of "queues": a queue name, or an object (a queue, or a stream's
// consumer group when it names a "group").
QueueConfig ParseSource(const nlohmann::json &item, const std::string &where);

}  // namespace pgmq::relay::config_detail
