// relay/include/pgmq/relay/config.hpp
// The relay's configuration: one JSON file (nlohmann/json), then command-line
// flags on top. Pure: no libpq, no rabbitmq-c, so every rule is unit-tested.
// Every error is a ConfigError whose message names the file position (a JSON
// path such as queues[1].after_confirm) and what was expected.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pgmq::relay {

class ConfigError : public std::runtime_error {
  public:
	explicit ConfigError(const std::string &message) : std::runtime_error(message) {}
};

// What the relay does with a message once the broker confirmed it.
enum class AfterConfirm { Delete, Archive };

struct QueueConfig {
	std::string name;         // the pgmq queue
	std::string exchange;     // "" is the default exchange
	std::string routing_key;  // default: the queue's name
	AfterConfirm after_confirm = AfterConfirm::Delete;
	// Whether a message's "x-pgmq-routing-key" header may replace routing_key
	// (within the same exchange: a producer never picks the exchange).
	bool routing_key_header = true;
};

struct BrokerConfig {
	std::string host = "127.0.0.1";
	int port = 5672;
	std::string vhost = "/";
	std::string user = "guest";
	std::string password = "guest";
	int heartbeat_s = 30;            // 0 disables AMQP heartbeats
	int confirm_timeout_ms = 10000;  // then the connection is taken as lost
	int connect_timeout_ms = 5000;
};

struct Config {
	std::string postgres;  // libpq connection string ("" = libpq's environment)
	BrokerConfig broker;
	std::vector<QueueConfig> queues;
	int batch_size = 100;
	int visibility_timeout_s = 30;  // must cover publish + confirm + delete
	int poll_s = 5;                 // read_with_poll's max_poll_seconds
	int poll_interval_ms = 100;     // its fallback interval when pgmq is not preloaded
	int report_interval_s = 10;     // the periodic log line; 0 = none
	std::string metrics_listen;     // "host:port" of the /metrics endpoint; "" = off
	int backoff_initial_ms = 200;
	int backoff_max_ms = 10000;
	bool drain = false;  // exit 0 once every queue was read empty (benchmarks, one-shot jobs)
};

// Parses the text of a configuration file; source names it in errors.
// Unknown keys are errors (a misspelt key would otherwise be silently ignored).
Config ParseConfig(std::string_view json_text, const std::string &source);

// Reads and parses a file. Throws ConfigError when it cannot be read.
Config LoadConfigFile(const std::string &path);

// amqp://user:password@host:port/vhost (percent-decoded; "/" when the path is
// empty, as RabbitMQ's URI spec says "%2F"). Overwrites the fields it names.
void ApplyAmqpUrl(std::string_view url, BrokerConfig &broker);

// The command line: --config FILE and the flags that override it.
struct CommandLine {
	std::string config_path;
	bool help = false;
	std::vector<std::pair<std::string, std::string>> overrides;  // flag, value, in order
};

// Throws ConfigError for an unknown flag or a flag without its value.
CommandLine ParseCommandLine(int argc, const char *const *argv);

// Applies the overrides (--postgres, --amqp-url, --queue, --batch-size, ...).
void ApplyOverrides(const CommandLine &line, Config &config);

// The checks that need the whole configuration (at least one queue, vt longer
// than the confirm timeout, no queue twice). Throws ConfigError.
void Validate(const Config &config);

// The usage text printed by --help and after a command-line error.
std::string Usage();

// host:port of metrics_listen; throws ConfigError when malformed.
std::pair<std::string, int> SplitListenAddress(std::string_view listen);

}  // namespace pgmq::relay
