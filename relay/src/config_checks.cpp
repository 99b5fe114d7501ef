// relay/src/config_checks.cpp
// The environment, the database password and the checks that need the
// whole configuration.
#include <set>
#include <stdexcept>

#include "config_internal.hpp"
#include "connection_settings.hpp"
#include "pgmq/relay/amqp_url.hpp"

namespace pgmq::relay {

using namespace config_detail;

void ApplyEnvironment(Config &config, const char *(*getenv)(const char *))
{
	const char *listen = getenv(kMetricsListenEnvironment);
	if (listen && *listen)
		config.metrics_listen = listen;
	const char *password_file = getenv(kPostgresPasswordFileEnvironment);
	if (password_file && *password_file)
		config.postgres_password_file = password_file;
}

void ResolvePostgresPassword(Config &config)
{
	if (config.postgres_password_file.empty())
		return;
	bool in_conninfo;
	try {
		in_conninfo = pg::ConninfoHasPassword(config.postgres);
	} catch (const std::invalid_argument &e) {
		Fail("postgres", e.what());
	}
	if (in_conninfo)
		Fail("postgres_password_file", "the connection string (postgres) holds a password too: keep one");
	try {
		config.postgres_password = pg::ReadPasswordFile(config.postgres_password_file);
	} catch (const std::runtime_error &e) {
		Fail("postgres_password_file", e.what());
	}
}

const std::string &DeadLetterQueueOf(const Config &config, const QueueConfig &queue)
{
	return queue.dead_letter_queue.empty() ? config.dead_letter_queue : queue.dead_letter_queue;
}

std::string DescribeSource(const QueueConfig &source)
{
	return source.is_stream() ? "stream " + source.name + ", group " + source.group : "queue " + source.name;
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
			throw ConfigError("queue \"" + queue.name + "\" is listed twice" +
							  (queue.is_stream() ? " (a relay reads a stream as one group)" : ""));
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
		if (queue.is_stream() && queue.after_confirm == AfterConfirm::Archive)
			throw ConfigError("stream \"" + queue.name + "\", group \"" + queue.group +
							  "\": a consumer group acknowledges a confirmed message (pgmq.ack), it does not "
							  "archive it: the stream keeps it for its other groups");
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

}  // namespace pgmq::relay
