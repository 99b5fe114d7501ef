// relay/src/config.cpp
// Configuration: JSON file, AMQP URL, command line. Pure functions; every
// failure is a ConfigError that says where and what.
#include "pgmq/relay/config.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/relay/amqp_url.hpp"

namespace pgmq::relay {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string &where, const std::string &what) { throw ConfigError(where + ": " + what); }

std::string Path(const std::string &where, const std::string &key) { return where.empty() ? key : where + "." + key; }

// Rejects keys that are not in allowed: a typo must not be silently ignored.
void CheckKeys(const json &object, const std::string &where, const std::set<std::string> &allowed)
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

void ReadString(const json &object, const std::string &where, const char *key, std::string &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_string())
		Fail(Path(where, key), "must be a string");
	out = it->get<std::string>();
}

void ReadInt(const json &object, const std::string &where, const char *key, int min, int max, int &out)
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

void ReadInt64(const json &object, const std::string &where, const char *key, std::int64_t min, std::int64_t max,
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

void ReadStringList(const json &object, const std::string &where, const char *key, std::vector<std::string> &out)
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

void ReadBool(const json &object, const std::string &where, const char *key, bool &out)
{
	auto it = object.find(key);
	if (it == object.end())
		return;
	if (!it->is_boolean())
		Fail(Path(where, key), "must be true or false");
	out = it->get<bool>();
}

AfterConfirm ParseAfterConfirm(const std::string &text, const std::string &where)
{
	if (text == "delete")
		return AfterConfirm::Delete;
	if (text == "archive")
		return AfterConfirm::Archive;
	Fail(where, "must be \"delete\" or \"archive\"");
}

// AMQP short strings (exchange, routing key) hold at most 255 bytes.
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

QueueConfig ParseQueue(const json &item, const std::string &where)
{
	QueueConfig queue;
	if (item.is_string()) {  // "orders": default exchange, routing key = name
		queue.name = item.get<std::string>();
	} else if (item.is_object()) {
		CheckKeys(item, where,
				  {"name", "exchange", "routing_key", "after_confirm", "routing_key_header", "routing_keys",
				   "dead_letter_queue"});
		if (!item.contains("name"))
			Fail(where, "a queue needs a \"name\"");
		ReadString(item, where, "name", queue.name);
		ReadString(item, where, "exchange", queue.exchange);
		ReadString(item, where, "routing_key", queue.routing_key);
		std::string after = "delete";
		ReadString(item, where, "after_confirm", after);
		queue.after_confirm = ParseAfterConfirm(after, Path(where, "after_confirm"));
		ReadBool(item, where, "routing_key_header", queue.routing_key_header);
		ReadStringList(item, where, "routing_keys", queue.routing_keys);
		for (std::size_t i = 0; i < queue.routing_keys.size(); i++)
			if (queue.routing_keys[i].empty() || queue.routing_keys[i].size() > 255)
				Fail(Path(where, "routing_keys") + "[" + std::to_string(i) + "]", "must be 1 to 255 bytes");
		ReadString(item, where, "dead_letter_queue", queue.dead_letter_queue);
		if (item.contains("dead_letter_queue"))
			CheckQueueName(queue.dead_letter_queue, Path(where, "dead_letter_queue"));
	} else {
		Fail(where, "must be a queue name or an object");
	}
	CheckQueueName(queue.name, Path(where, "name"));
	if (queue.routing_key.empty())
		queue.routing_key = queue.name;
	CheckShortString(queue.exchange, Path(where, "exchange"));
	CheckShortString(queue.routing_key, Path(where, "routing_key"));
	return queue;
}

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

constexpr std::int64_t kMinBatchBytes = 1024;
constexpr std::int64_t kMaxBatchBytes = 1024LL * 1024 * 1024;

long long ParseIntFlag(const std::string &flag, const std::string &value, long long min, long long max)
{
	if (value.empty() || value.size() > 12 || value.find_first_not_of("0123456789") != std::string::npos)
		Fail(flag, "must be a whole number");
	long long number = std::stoll(value);
	if (number < min || number > max)
		Fail(flag, "must be between " + std::to_string(min) + " and " + std::to_string(max));
	return number;
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
				  {"postgres", "rabbitmq", "queues", "batch_size", "batch_max_bytes", "visibility_timeout_s", "poll_s",
				   "poll_interval_ms", "report_interval_s", "metrics_listen", "backoff_initial_ms", "backoff_max_ms",
				   "dead_letter_queue"});
		ReadString(root, "", "postgres", config.postgres);
		if (root.contains("rabbitmq"))
			ParseBroker(root["rabbitmq"], "rabbitmq", config.broker);
		if (root.contains("queues")) {
			const json &queues = root["queues"];
			if (!queues.is_array())
				Fail("queues", "must be an array");
			for (std::size_t i = 0; i < queues.size(); i++)
				config.queues.push_back(ParseQueue(queues[i], "queues[" + std::to_string(i) + "]"));
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

CommandLine ParseCommandLine(int argc, const char *const *argv)
{
	// Flags that take a value; the others are switches.
	static const std::set<std::string> with_value = {
		"--config",          "--postgres",          "--amqp-url",        "--amqp-password-file", "--queue",
		"--exchange",        "--routing-key",       "--dead-letter-queue", "--batch-size",       "--batch-max-bytes",
		"--vt",              "--poll",              "--confirm-timeout", "--metrics-listen",     "--report-interval"};
	static const std::set<std::string> switches = {"--archive", "--drain", "--help"};
	CommandLine line;
	for (int i = 1; i < argc; i++) {
		std::string arg = argv[i];
		std::string value;
		bool has_value = false;
		auto eq = arg.find('=');
		if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
			value = arg.substr(eq + 1);
			arg = arg.substr(0, eq);
			has_value = true;
		}
		if (switches.count(arg)) {
			if (has_value)
				Fail(arg, "takes no value");
			if (arg == "--help")
				line.help = true;
			else
				line.overrides.emplace_back(arg, "");
			continue;
		}
		if (!with_value.count(arg))
			Fail(arg, "unknown option (see --help)");
		if (!has_value) {
			if (i + 1 >= argc)
				Fail(arg, "needs a value");
			value = argv[++i];
		}
		if (arg == "--config")
			line.config_path = value;
		else
			line.overrides.emplace_back(arg, value);
	}
	return line;
}

void ApplyOverrides(const CommandLine &line, Config &config)
{
	// --queue on the command line replaces the file's list; --exchange,
	// --routing-key and --archive refine the --queue before them. The
	// --amqp-url flags together replace the file's broker addresses.
	bool replaced_queues = false;
	std::vector<std::string> urls;
	auto last_queue = [&](const std::string &flag) -> QueueConfig & {
		if (!replaced_queues)
			Fail(flag, "must follow a --queue");
		return config.queues.back();
	};
	for (const auto &[flag, value] : line.overrides) {
		if (flag == "--postgres") {
			config.postgres = value;
		} else if (flag == "--amqp-url") {
			urls.push_back(value);
		} else if (flag == "--amqp-password-file") {
			config.broker.password_file = value;
		} else if (flag == "--dead-letter-queue") {
			CheckQueueName(value, flag);
			(replaced_queues ? config.queues.back().dead_letter_queue : config.dead_letter_queue) = value;
		} else if (flag == "--queue") {
			if (!replaced_queues)
				config.queues.clear();
			replaced_queues = true;
			CheckQueueName(value, flag);
			QueueConfig queue;
			queue.name = value;
			queue.routing_key = value;
			config.queues.push_back(queue);
		} else if (flag == "--exchange") {
			CheckShortString(value, flag);
			last_queue(flag).exchange = value;
		} else if (flag == "--routing-key") {
			CheckShortString(value, flag);
			last_queue(flag).routing_key = value.empty() ? last_queue(flag).name : value;
		} else if (flag == "--archive") {
			last_queue(flag).after_confirm = AfterConfirm::Archive;
		} else if (flag == "--batch-size") {
			config.batch_size = static_cast<int>(ParseIntFlag(flag, value, 1, 10000));
		} else if (flag == "--batch-max-bytes") {
			config.batch_max_bytes = ParseIntFlag(flag, value, kMinBatchBytes, kMaxBatchBytes);
		} else if (flag == "--vt") {
			config.visibility_timeout_s = static_cast<int>(ParseIntFlag(flag, value, 1, 86400));
		} else if (flag == "--poll") {
			config.poll_s = static_cast<int>(ParseIntFlag(flag, value, 0, 3600));
		} else if (flag == "--confirm-timeout") {
			config.broker.confirm_timeout_ms = static_cast<int>(ParseIntFlag(flag, value, 10, 600000));
		} else if (flag == "--metrics-listen") {
			config.metrics_listen = value;
		} else if (flag == "--report-interval") {
			config.report_interval_s = static_cast<int>(ParseIntFlag(flag, value, 0, 86400));
		} else if (flag == "--drain") {
			config.drain = true;
		} else {
			Fail(flag, "unknown option");
		}
	}
	if (!urls.empty()) {
		try {
			ApplyAmqpUrls(urls, config.broker);
		} catch (const ConfigError &e) {
			Fail("--amqp-url", e.what());
		}
	}
}

const std::string &DeadLetterQueueOf(const Config &config, const QueueConfig &queue)
{
	return queue.dead_letter_queue.empty() ? config.dead_letter_queue : queue.dead_letter_queue;
}

std::pair<std::string, int> SplitListenAddress(std::string_view listen)
{
	auto colon = listen.rfind(':');
	if (colon == std::string_view::npos)
		Fail("metrics_listen", "must be host:port, e.g. 127.0.0.1:9464");
	std::string host(listen.substr(0, colon));
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	if (host.empty())
		host = "0.0.0.0";
	return {host, ParsePort(listen.substr(colon + 1), "metrics_listen")};
}

void Validate(const Config &config)
{
	if (config.queues.empty())
		throw ConfigError("no queue to relay: list them in \"queues\" or give --queue");
	std::set<std::string> seen;
	for (const auto &queue : config.queues) {
		if (!seen.insert(queue.name).second)
			throw ConfigError("queue \"" + queue.name + "\" is listed twice");
		std::string where = "queue \"" + queue.name + "\": ";
		// With the default exchange a routing key names a broker queue: a
		// sender choosing it could write into any queue of the vhost.
		if (queue.routing_key_header && queue.exchange.empty() && queue.routing_keys.empty())
			throw ConfigError(where +
							  "routing_key_header with the default exchange lets a sender pick any broker queue; "
							  "list the keys it may pick in routing_keys");
		if (!queue.routing_keys.empty() && !queue.routing_key_header)
			throw ConfigError(where + "routing_keys needs routing_key_header: true");
		if (DeadLetterQueueOf(config, queue) == queue.name)
			throw ConfigError(where + "cannot be its own dead_letter_queue");
	}
	if (!config.broker.tls.enabled &&
		!(config.broker.tls.ca_file.empty() && config.broker.tls.cert_file.empty()))
		throw ConfigError("rabbitmq.tls: only with an amqps:// URL");
	// A message must stay invisible while it is published and confirmed, or a
	// second relay (or this one, after a reconnect) would publish it again.
	if (config.visibility_timeout_s * 1000LL <= config.broker.confirm_timeout_ms)
		throw ConfigError("visibility_timeout_s (" + std::to_string(config.visibility_timeout_s) +
						  " s) must be longer than rabbitmq.confirm_timeout_ms (" +
						  std::to_string(config.broker.confirm_timeout_ms) + " ms)");
	// An empty read waits poll_s without touching the broker connection;
	// the broker drops a client that is silent for two heartbeats.
	if (config.broker.heartbeat_s > 0 && config.poll_s >= config.broker.heartbeat_s)
		throw ConfigError("poll_s (" + std::to_string(config.poll_s) +
						  " s) must be shorter than rabbitmq.heartbeat_s (" +
						  std::to_string(config.broker.heartbeat_s) + " s), or the broker drops an idle relay");
	if (config.backoff_max_ms < config.backoff_initial_ms)
		throw ConfigError("backoff_max_ms must not be smaller than backoff_initial_ms");
	if (!config.metrics_listen.empty())
		SplitListenAddress(config.metrics_listen);
}

std::string Usage()
{
	return "usage: pgmq-relay [--config FILE] [options]\n"
		   "Relays pgmq queues to RabbitMQ with publisher confirms; deletes (or archives)\n"
		   "a message only after the broker confirmed it. See pgmq-relay(1), docs/relay.md.\n"
		   "\n"
		   "  --config FILE            JSON configuration (flags below override it)\n"
		   "  --postgres CONNINFO      libpq connection string\n"
		   "  --amqp-url URL           amqp[s]://user@host:port/vhost (repeat for a cluster's nodes)\n"
		   "  --amqp-password-file F   the broker password (or PGMQ_RELAY_AMQP_PASSWORD)\n"
		   "  --queue NAME             relay this queue (repeatable; replaces the file's list)\n"
		   "    --exchange NAME        ... to this exchange (default: the default exchange \"\")\n"
		   "    --routing-key KEY      ... with this routing key (default: the queue's name)\n"
		   "    --archive              ... and archive instead of delete after the confirm\n"
		   "    --dead-letter-queue Q  ... and move refused messages to pgmq queue Q\n"
		   "                           (before any --queue: for every queue)\n"
		   "  --batch-size N           messages per read (default 100)\n"
		   "  --batch-max-bytes N      bytes per read (default 8388608)\n"
		   "  --vt SECONDS             visibility timeout of a read (default 30)\n"
		   "  --poll SECONDS           read_with_poll's max_poll_seconds (default 5)\n"
		   "  --confirm-timeout MS     wait for confirms this long (default 10000)\n"
		   "  --metrics-listen H:P     serve Prometheus text at http://H:P/metrics\n"
		   "  --report-interval S      periodic log line every S seconds (default 10, 0 = off)\n"
		   "  --drain                  exit 0 once every queue has been read empty\n"
		   "  --help                   this text\n"
		   "Exit status 2: a bad configuration, or a queue that does not exist.\n";
}

}  // namespace pgmq::relay
