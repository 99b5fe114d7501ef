// console/src/stream_api.hpp
// Streams in the JSON API (docs/console.md#streams): a stream's consumer
// groups, from the catalog entry the overview and a queue's page already
// read, each with the alerts of docs/monitoring.md that fire for it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pgmq::console {

// Whether the catalog entry is a stream (its "stream" is true).
bool IsStream(const nlohmann::json &entry);

// The entry's groups (pgmq.stream_groups' columns, their ages and
// "alerts"), by name; an empty array for a stream without groups.
nlohmann::json StreamGroups(const nlohmann::json &entry);

// The overview's object of a stream: name, groups, and alerts (each alert
// that fires for one of its groups, once).
nlohmann::json StreamSummary(const nlohmann::json &entry);

// The body of a seek ({"group": "...", "since": "timestamp"}) checked:
// throws ApiError 400 naming what is wrong.
void CheckSeekRequest(const nlohmann::json &request, std::string &group, std::string &since);

}  // namespace pgmq::console
