// relay/src/amqp_url.cpp
// AMQP URLs (one broker, or a cluster's nodes) and the password's sources.
#include "pgmq/relay/amqp_url.hpp"

#include <fstream>

namespace pgmq::relay {
namespace {

int HexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

std::string PercentDecode(std::string_view text)
{
	std::string out;
	for (std::size_t i = 0; i < text.size(); i++) {
		if (text[i] != '%') {
			out += text[i];
			continue;
		}
		int high = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
		int low = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
		if (high < 0 || low < 0)
			throw ConfigError("bad percent-escape in AMQP URL");
		out += static_cast<char>(high * 16 + low);
		i += 2;
	}
	return out;
}

}  // namespace

int ParsePort(std::string_view text, const std::string &where)
{
	if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos)
		throw ConfigError(where + ": port must be a number between 1 and 65535");
	int port = std::stoi(std::string(text));
	if (port < 1 || port > 65535)
		throw ConfigError(where + ": port must be a number between 1 and 65535");
	return port;
}

AmqpUrl ParseAmqpUrl(std::string_view url)
{
	// Errors never repeat the URL: it may hold the password.
	AmqpUrl parsed;
	std::string_view rest;
	if (url.substr(0, 7) == "amqp://") {
		rest = url.substr(7);
	} else if (url.substr(0, 8) == "amqps://") {
		rest = url.substr(8);
		parsed.tls = true;
		parsed.address.port = 5671;
	} else {
		throw ConfigError("AMQP URL must start with amqp:// or amqps://");
	}
	std::string_view authority = rest.substr(0, rest.find('/'));
	std::string_view path = rest.size() > authority.size() ? rest.substr(authority.size() + 1) : std::string_view();
	auto at = authority.rfind('@');
	if (at != std::string_view::npos) {
		std::string_view userinfo = authority.substr(0, at);
		authority = authority.substr(at + 1);
		auto colon = userinfo.find(':');
		parsed.user = PercentDecode(userinfo.substr(0, colon));
		parsed.has_user = true;
		if (colon != std::string_view::npos) {
			parsed.password = PercentDecode(userinfo.substr(colon + 1));
			parsed.has_password = true;
		}
	}
	std::string_view host = authority;
	if (!authority.empty() && authority.front() == '[') {  // [::1]:5672
		auto close = authority.find(']');
		if (close == std::string_view::npos)
			throw ConfigError("AMQP URL has an unclosed [ in its host");
		host = authority.substr(1, close - 1);
		std::string_view after = authority.substr(close + 1);
		if (!after.empty()) {
			if (after.front() != ':')
				throw ConfigError("AMQP URL: unexpected text after the host");
			parsed.address.port = ParsePort(after.substr(1), "AMQP URL");
		}
	} else {
		auto colon = authority.find(':');
		if (colon != std::string_view::npos) {
			host = authority.substr(0, colon);
			parsed.address.port = ParsePort(authority.substr(colon + 1), "AMQP URL");
		}
	}
	if (!host.empty())
		parsed.address.host = PercentDecode(host);
	parsed.vhost = path.empty() ? "/" : PercentDecode(path);
	return parsed;
}

void ApplyAmqpUrls(const std::vector<std::string> &urls, BrokerConfig &broker)
{
	std::vector<AmqpUrl> parsed;
	for (const auto &url : urls)
		parsed.push_back(ParseAmqpUrl(url));
	if (parsed.empty())
		throw ConfigError("no AMQP URL");
	const AmqpUrl &first = parsed.front();
	broker.addresses.clear();
	for (std::size_t i = 0; i < parsed.size(); i++) {
		const AmqpUrl &node = parsed[i];
		// One relay, one broker (a cluster's nodes): the same scheme, vhost
		// and login everywhere, so that a failover changes nothing else.
		std::string which = urls.size() > 1 ? "AMQP URL " + std::to_string(i + 1) + ": " : "";
		if (node.tls != first.tls)
			throw ConfigError(which + "mixes amqp:// and amqps://");
		if (node.vhost != first.vhost)
			throw ConfigError(which + "names another vhost than the first");
		if ((node.has_user && node.user != first.user) || (node.has_password && node.password != first.password))
			throw ConfigError(which + "names other credentials than the first");
		broker.addresses.push_back(node.address);
	}
	broker.tls.enabled = first.tls;
	broker.vhost = first.vhost;
	if (first.has_user)
		broker.user = first.user;
	if (first.has_password)
		broker.password = first.password;
}

void ResolvePassword(BrokerConfig &broker, const char *environment_password)
{
	if (!broker.password_file.empty()) {
		std::ifstream file(broker.password_file, std::ios::binary);
		std::string line;
		if (!file || !std::getline(file, line))
			throw ConfigError("rabbitmq.password_file: " + broker.password_file + " cannot be read");
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		if (line.empty())
			throw ConfigError("rabbitmq.password_file: " + broker.password_file + " starts with an empty line");
		broker.password = line;
	} else if (environment_password != nullptr && *environment_password != '\0') {
		broker.password = environment_password;
	}
}

}  // namespace pgmq::relay
