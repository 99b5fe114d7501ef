// relay/include/pgmq/relay/config.hpp
// The relay's configuration: one JSON file (nlohmann/json), then command-line
// flags on top. Pure: no libpq, no rabbitmq-c, so every rule is unit-tested.
// Every error is a ConfigError: one line naming the file, the key path (such
// as queues[1].after_confirm) and what was expected.
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

// A source: a pgmq queue, or a consumer group of a stream (docs/streams.md).
struct QueueConfig {
	std::string name;         // the pgmq queue, or the stream when group is set
	std::string exchange;     // "" is the default exchange
	std::string routing_key;  // default: the queue's name
	AfterConfirm after_confirm = AfterConfirm::Delete;
	// Whether a message's "x-pgmq-routing-key" header may replace routing_key
	// (within the same exchange: a producer never picks the exchange). Off by
	// default: a sender must not choose the broker route unless configured.
	bool routing_key_header = false;
	// The keys a message may choose; empty = any (refused with the default
	// exchange, where a key names a broker queue).
	std::vector<std::string> routing_keys;
	// The pgmq queue that receives the messages the broker (or the relay's
	// header rules) refuse; "" = leave them in the queue.
	std::string dead_letter_queue;
	// A stream's consumer group: the relay reads the stream as this group
	// (pgmq.read_stream_with_poll) and acknowledges a confirmed message with
	// pgmq.ack instead of deleting it. "" = name is a queue.
	std::string group;
	// Subscribe the group at start when it does not exist (pgmq.subscribe);
	// without it a missing group stops the relay. An existing group is left
	// as it is (a subscribe would reset its options).
	bool subscribe = false;
	// subscribe's since ("-infinity": every message the stream still holds;
	// a time); "" = NULL: the messages that commit after the subscribe.
	std::string since;
	bool is_stream() const { return !group.empty(); }
};

// "queue orders" or "stream orders, group rabbitmq": how logs and errors name a source.
std::string DescribeSource(const QueueConfig &source);

// One broker node; a cluster is several, tried in turn.
struct BrokerAddress {
	std::string host = "127.0.0.1";
	int port = 5672;
	bool operator==(const BrokerAddress &other) const { return host == other.host && port == other.port; }
};

// amqps: the broker's certificate is verified against ca_file (or the
// system's CAs) and must name the host; a client certificate is optional.
struct TlsConfig {
	bool enabled = false;
	std::string ca_file;
	std::string cert_file;
	std::string key_file;
};

struct BrokerConfig {
	std::vector<BrokerAddress> addresses{BrokerAddress{}};
	TlsConfig tls;
	std::string vhost = "/";
	std::string user = "guest";
	std::string password = "guest";
	std::string password_file;       // read at startup; wins over the URL's password
	int heartbeat_s = 30;            // 0 disables AMQP heartbeats
	int confirm_timeout_ms = 10000;  // publish + confirm of a batch; then the connection is taken as lost
	int connect_timeout_ms = 5000;
};

struct Config {
	// libpq connection string ("" = libpq's environment: PGHOST, PGSSLMODE,
	// PGPASSWORD, ...). TLS settings (sslmode, sslrootcert, sslcert, sslkey)
	// are libpq's own, in it or in the environment.
	std::string postgres;
	// The database password's file (its first line), read at startup into
	// postgres_password; never on the command line.
	std::string postgres_password_file;
	std::string postgres_password;
	BrokerConfig broker;
	std::vector<QueueConfig> queues;
	int batch_size = 100;
	// A batch also stops at this many bytes of message bodies and headers
	// (at least one message is always taken), so memory stays bounded.
	std::int64_t batch_max_bytes = 8 * 1024 * 1024;
	int visibility_timeout_s = 30;  // must cover publish + confirm + delete
	int poll_s = 5;                 // read_with_poll's max_poll_seconds
	int poll_interval_ms = 100;     // its fallback interval when pgmq is not preloaded
	int report_interval_s = 10;     // the periodic log line; 0 = none
	std::string metrics_listen;     // "host:port" of the /metrics endpoint; "" = off
	std::string dead_letter_queue;  // for the queues that name none of their own
	// A dead-letter queue that does not exist is made with pgmq.create (which
	// upstream pgmq has too) instead of stopping the relay.
	bool create_dead_letter_queues = false;
	int backoff_initial_ms = 200;
	int backoff_max_ms = 10000;
	bool drain = false;  // exit 0 once every queue was read empty (benchmarks, one-shot jobs)
};

// Parses the text of a configuration file; source names it in errors.
// Unknown keys are errors (a misspelt key would otherwise be silently ignored).
Config ParseConfig(std::string_view json_text, const std::string &source);

// Reads and parses a file. Throws ConfigError when it cannot be read.
Config LoadConfigFile(const std::string &path);

// The command line: --config FILE and the flags that override it.
struct CommandLine {
	std::string config_path;
	bool help = false;
	std::vector<std::pair<std::string, std::string>> overrides;  // flag, value, in order
};

// Throws ConfigError for an unknown flag or a flag without its value.
CommandLine ParseCommandLine(int argc, const char *const *argv);

// Applies the overrides (--postgres, --amqp-url, --queue, --batch-size, ...).
// A --postgres connection string with a password is refused: the command
// line is every user's to read.
void ApplyOverrides(const CommandLine &line, Config &config);

// The environment, between the file and the command line (a container's
// configuration): PGMQ_RELAY_METRICS_LISTEN and
// PGMQ_RELAY_POSTGRES_PASSWORD_FILE replace the file's metrics_listen and
// postgres_password_file. getenv returns nullptr for an unset variable.
void ApplyEnvironment(Config &config, const char *(*getenv)(const char *));
inline constexpr const char kMetricsListenEnvironment[] = "PGMQ_RELAY_METRICS_LISTEN";
inline constexpr const char kPostgresPasswordFileEnvironment[] = "PGMQ_RELAY_POSTGRES_PASSWORD_FILE";

// Reads postgres_password_file into postgres_password. A password in the
// connection string too is an error: one place only.
void ResolvePostgresPassword(Config &config);

// The checks that need the whole configuration (at least one queue, vt longer
// than the confirm timeout, no queue twice, no sender-chosen broker queue).
// Throws ConfigError.
void Validate(const Config &config);

// The usage text printed by --help.
std::string Usage();

// The dead-letter queue of queue: its own, else the configuration's; "" = none.
const std::string &DeadLetterQueueOf(const Config &config, const QueueConfig &queue);

// host:port of metrics_listen; throws ConfigError when malformed.
std::pair<std::string, int> SplitListenAddress(std::string_view listen);

}  // namespace pgmq::relay
