// relay/include/pgmq/relay/amqp_url.hpp
// The broker's addresses and credentials: AMQP URLs (one broker, or a
// cluster's nodes) and where the password comes from. Errors never repeat a
// URL or a password.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pgmq/relay/config.hpp"

namespace pgmq::relay {

// The parts of amqp[s]://user:password@host:port/vhost (percent-decoded;
// vhost "/" when the path is empty, as RabbitMQ's URI spec says "%2F").
struct AmqpUrl {
	BrokerAddress address;
	bool tls = false;
	std::string user, password, vhost = "/";
	bool has_user = false, has_password = false;
};
AmqpUrl ParseAmqpUrl(std::string_view url);

// Sets the broker from urls (one, or a cluster's nodes): the addresses in
// order, then the scheme, vhost and credentials, which all must share.
void ApplyAmqpUrls(const std::vector<std::string> &urls, BrokerConfig &broker);
inline void ApplyAmqpUrl(std::string_view url, BrokerConfig &broker) { ApplyAmqpUrls({std::string(url)}, broker); }

// The environment variable that can hold the broker password, so that it is
// needed neither on the command line nor in the configuration file.
constexpr const char *kPasswordEnvironment = "PGMQ_RELAY_AMQP_PASSWORD";

// The password's final source: broker.password_file if set (its first line),
// else environment_password if not null, else what the URL or file said.
// Throws ConfigError when the file cannot be read or is empty.
void ResolvePassword(BrokerConfig &broker, const char *environment_password);

// "5672" as a port; throws ConfigError naming where otherwise.
int ParsePort(std::string_view text, const std::string &where);

}  // namespace pgmq::relay
