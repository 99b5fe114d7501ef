// relay/src/config.cpp
// The configuration file (JSON): its top level, the broker and TLS. Pure
// functions; every failure is a ConfigError that says where and what. The
// items of "queues" are in config_sources.cpp, the value readers in
// config_json.cpp, the command line in command_line.cpp, the environment and
// the checks of the whole in config_checks.cpp.
#include "pgmq/relay/config.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/relay/amqp_url.hpp"
#include "config_internal.hpp"
#include "config_json.hpp"

namespace pgmq::relay {
namespace config_detail {

void Fail(const std::string &where, const std::string &what) { throw ConfigError(where + ": " + what); }

std::string Path(const std::string &where, const std::string &key) { return where.empty() ? key : where + "." + key; }

void CheckShortString(const std::string &value, const std::string &where)
{
	if (value.size() > 255)
		Fail(where, "longer than AMQP's 255-byte limit");
}

void CheckQueueName(const std::string &name, const std::string &where)
{
	try {
		core::CheckQueueNameCharacters(name);
		core::CheckQueueNameLength(name);
	} catch (const core::CoreError &e) {
		Fail(where, e.what());
	}
}

}  // namespace config_detail

namespace {

using nlohmann::json;
using namespace config_detail;

void ParseTls(const json &object, const std::string &where, TlsConfig &tls)
{
	if (!object.is_object())
		Fail(where, "must be an object");
	CheckKeys(object, where, {"ca_file", "cert_file", "key_file"});
	ReadString(object, where, "ca_file", tls.ca_file);
	ReadString(object, where, "cert_file", tls.cert_file);
	ReadString(object, where, "key_file", tls.key_file);
	if (tls.cert_file.empty() != tls.key_file.empty())
		Fail(where, "a client certificate needs both cert_file and key_file");
}

void ParseBroker(const json &object, const std::string &where, BrokerConfig &broker)
{
	if (!object.is_object())
		Fail(where, "must be an object");
	CheckKeys(object, where,
			  {"url", "urls", "host", "port", "vhost", "user", "password", "password_file", "tls", "heartbeat_s",
			   "confirm_timeout_ms", "connect_timeout_ms"});
	if (object.contains("url") && object.contains("urls"))
		Fail(Path(where, "urls"), "give either url or urls, not both");
	std::vector<std::string> urls;
	std::string url;
	ReadString(object, where, "url", url);
	if (!url.empty())
		urls.push_back(url);
	ReadStringList(object, where, "urls", urls);
	if (!urls.empty()) {
		try {
			ApplyAmqpUrls(urls, broker);
		} catch (const ConfigError &e) {
			Fail(Path(where, object.contains("urls") ? "urls" : "url"), e.what());
		}
	}
	// Separate fields after the URL: they refine it (one address only).
	if ((object.contains("host") || object.contains("port")) && broker.addresses.size() != 1)
		Fail(Path(where, object.contains("host") ? "host" : "port"), "only with a single broker address");
	ReadString(object, where, "host", broker.addresses.front().host);
	ReadInt(object, where, "port", 1, 65535, broker.addresses.front().port);
	ReadString(object, where, "vhost", broker.vhost);
	ReadString(object, where, "user", broker.user);
	ReadString(object, where, "password", broker.password);
	ReadString(object, where, "password_file", broker.password_file);
	if (object.contains("tls")) {
		ParseTls(object["tls"], Path(where, "tls"), broker.tls);
	}
	ReadInt(object, where, "heartbeat_s", 0, 3600, broker.heartbeat_s);
	ReadInt(object, where, "confirm_timeout_ms", 10, 600000, broker.confirm_timeout_ms);
	ReadInt(object, where, "connect_timeout_ms", 10, 600000, broker.connect_timeout_ms);
}

// nlohmann's message ends with "; last read: '...'", text of the file that
// may be a password: keep the position and the reason only.
std::string JsonErrorWithoutText(std::string message)
{
	auto last_read = message.find("; last read:");
	if (last_read != std::string::npos)
		message.erase(last_read);
	auto tag_end = message.find("] ");
	if (message.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos)
		message.erase(0, tag_end + 2);
	return message;
}

}  // namespace

Config ParseConfig(std::string_view json_text, const std::string &source)
{
	json root;
	try {
		root = json::parse(json_text.begin(), json_text.end());
	} catch (const json::parse_error &e) {
		throw ConfigError(source + ": not valid JSON: " + JsonErrorWithoutText(e.what()));
	}
	if (!root.is_object())
		throw ConfigError(source + ": the top level must be a JSON object");
	Config config;
	try {
		CheckKeys(root, "",
				  {"postgres", "postgres_password_file", "rabbitmq", "queues", "batch_size", "batch_max_bytes",
				   "visibility_timeout_s", "poll_s", "poll_interval_ms", "report_interval_s", "metrics_listen",
				   "backoff_initial_ms", "backoff_max_ms", "dead_letter_queue", "create_dead_letter_queues"});
		ReadString(root, "", "postgres", config.postgres);
		ReadString(root, "", "postgres_password_file", config.postgres_password_file);
		ReadBool(root, "", "create_dead_letter_queues", config.create_dead_letter_queues);
		if (root.contains("rabbitmq"))
			ParseBroker(root["rabbitmq"], "rabbitmq", config.broker);
		if (root.contains("queues")) {
			const json &queues = root["queues"];
			if (!queues.is_array())
				Fail("queues", "must be an array");
			for (std::size_t i = 0; i < queues.size(); i++)
				config.queues.push_back(ParseSource(queues[i], "queues[" + std::to_string(i) + "]"));
		}
		ReadInt(root, "", "batch_size", 1, 10000, config.batch_size);
		ReadInt64(root, "", "batch_max_bytes", kMinBatchBytes, kMaxBatchBytes, config.batch_max_bytes);
		ReadString(root, "", "dead_letter_queue", config.dead_letter_queue);
		if (root.contains("dead_letter_queue"))
			CheckQueueName(config.dead_letter_queue, "dead_letter_queue");
		ReadInt(root, "", "visibility_timeout_s", 1, 86400, config.visibility_timeout_s);
		ReadInt(root, "", "poll_s", 0, 3600, config.poll_s);
		ReadInt(root, "", "poll_interval_ms", 1, 60000, config.poll_interval_ms);
		ReadInt(root, "", "report_interval_s", 0, 86400, config.report_interval_s);
		ReadString(root, "", "metrics_listen", config.metrics_listen);
		ReadInt(root, "", "backoff_initial_ms", 1, 3600000, config.backoff_initial_ms);
		ReadInt(root, "", "backoff_max_ms", 1, 3600000, config.backoff_max_ms);
	} catch (const ConfigError &e) {
		throw ConfigError(source + ": " + e.what());
	}
	return config;
}

Config LoadConfigFile(const std::string &path)
{
	std::ifstream file(path, std::ios::binary);
	if (!file)
		throw ConfigError(path + ": cannot be read");
	std::ostringstream text;
	text << file.rdbuf();
	return ParseConfig(text.str(), path);
}

}  // namespace pgmq::relay
