// console/src/stream_api.cpp
#include "stream_api.hpp"

#include <algorithm>
#include <optional>

#include "pgmq/console/alerts.hpp"
#include "pgmq/console/api_error.hpp"

namespace pgmq::console {
namespace {

using nlohmann::json;

// bigint columns arrive as JSON numbers; numeric text is taken too.
std::optional<long long> Count(const json &value)
{
	if (value.is_number())
		return value.get<long long>();
	if (value.is_string()) {
		try {
			return std::stoll(value.get<std::string>());
		} catch (const std::exception &) {
		}
	}
	return std::nullopt;
}

std::optional<double> Seconds(const json &value)
{
	return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

}  // namespace

bool IsStream(const json &entry)
{
	auto it = entry.find("stream");
	return it != entry.end() && it->is_boolean() && it->get<bool>();
}

json StreamGroups(const json &entry)
{
	json groups = json::array();
	auto it = entry.find("stream_groups");
	if (it == entry.end() || !it->is_array())
		return groups;
	for (json group : *it) {
		StreamGroupFigures figures;
		figures.pending = Count(group.value("pending", json())).value_or(0);
		figures.idle_seconds = Seconds(group.value("idle_sec", json()));
		figures.held_bytes = Count(group.value("held_bytes", json()));
		group["alerts"] = FiringGroupAlerts(figures);
		groups.push_back(std::move(group));
	}
	return groups;
}

json StreamSummary(const json &entry)
{
	json groups = StreamGroups(entry);
	std::vector<std::string> alerts;
	for (const json &group : groups)
		for (const json &alert : group.at("alerts"))
			if (std::find(alerts.begin(), alerts.end(), alert.get<std::string>()) == alerts.end())
				alerts.push_back(alert.get<std::string>());
	return json{{"name", entry.at("name")}, {"groups", std::move(groups)}, {"alerts", alerts}};
}

void CheckSeekRequest(const json &request, std::string &group, std::string &since)
{
	const json &g = request.value("group", json());
	const json &s = request.value("since", json());
	if (!g.is_string() || g.get<std::string>().empty())
		throw ApiError(400, "group: expected the name of one of the stream's consumer groups");
	if (!s.is_string() || s.get<std::string>().empty())
		throw ApiError(400, "since: expected a time, such as \"2026-12-06 09:00:00+00\"");
	group = g.get<std::string>();
	since = s.get<std::string>();
}

}  // namespace pgmq::console
