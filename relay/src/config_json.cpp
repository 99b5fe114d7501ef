// relay/src/config_json.cpp
// The configuration file's value readers (config_json.hpp).
#include "config_json.hpp"

#include "config_internal.hpp"

namespace pgmq::relay::config_detail {

void CheckKeys(const nlohmann::json &object, const std::string &where, const std::set<std::string> &allowed)
{
	for (auto it = object.begin(); it != object.end(); ++it) {
		if (allowed.count(it.key()))
			continue;
		std::string expected;
		for (const auto &key : allowed)
			expected += (expected.empty() ? "" : ", ") + key;
		Fail(Path(where, it.key()), "unknown key (expected one of: " + expected + ")");
	}
}

void ReadString(const nlohmann::json &object, const std::string &where, const char *key, std::string &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_string())
		Fail(Path(where, key), "must be a string");
	out = it->get<std::string>();
}

void ReadInt(const nlohmann::json &object, const std::string &where, const char *key, int min, int max, int &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_number_integer())
		Fail(Path(where, key), "must be an integer");
	auto value = it->get<long long>();
	if (value < min || value > max)
		Fail(Path(where, key), "must be between " + std::to_string(min) + " and " + std::to_string(max));
	out = static_cast<int>(value);
}

void ReadInt64(const nlohmann::json &object, const std::string &where, const char *key, std::int64_t min, std::int64_t max,
			   std::int64_t &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_number_integer())
		Fail(Path(where, key), "must be an integer");
	auto value = it->get<long long>();
	if (value < min || value > max)
		Fail(Path(where, key), "must be between " + std::to_string(min) + " and " + std::to_string(max));
	out = value;
}

void ReadStringList(const nlohmann::json &object, const std::string &where, const char *key, std::vector<std::string> &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_array() || it->empty())
		Fail(Path(where, key), "must be a non-empty array of strings");
	out.clear();
	for (std::size_t i = 0; i < it->size(); i++) {
		if (!(*it)[i].is_string())
			Fail(Path(where, key) + "[" + std::to_string(i) + "]", "must be a string");
		out.push_back((*it)[i].get<std::string>());
	}
}

void ReadBool(const nlohmann::json &object, const std::string &where, const char *key, bool &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_boolean())
		Fail(Path(where, key), "must be true or false");
	out = it->get<bool>();
}

}  // namespace pgmq::relay::config_detail
