// console/src/request_guard.cpp
#include "pgmq/console/request_guard.hpp"

#include <algorithm>
#include <cctype>
#include <random>

namespace pgmq::console {
namespace {

std::string Lower(std::string text)
{
	std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
	return text;
}

bool IsLoopback(const std::string &host)
{
	return host == "127.0.0.1" || host == "::1" || Lower(host) == "localhost";
}

std::string HostWithPort(const std::string &host, int port)
{
	std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
	return Lower(name) + ":" + std::to_string(port);
}

}  // namespace

RequestGuard::RequestGuard(const std::string &listen_host, int port, const std::vector<std::string> &extra_hosts,
						   std::string token)
	: token_(std::move(token))
{
	hosts_.push_back(HostWithPort(listen_host, port));
	if (IsLoopback(listen_host))
		for (const char *name : {"127.0.0.1", "::1", "localhost"})
			hosts_.push_back(HostWithPort(name, port));
	for (const auto &name : extra_hosts) {
		hosts_.push_back(Lower(name));  // as sent behind a proxy on port 80/443
		hosts_.push_back(HostWithPort(name, port));
	}
}

bool RequestGuard::HostAllowed(const std::string &host) const
{
	return std::find(hosts_.begin(), hosts_.end(), Lower(host)) != hosts_.end();
}

std::string RequestGuard::RefuseRead(const RequestFacts &request) const
{
	if (!HostAllowed(request.host))
		return "Host \"" + request.host + "\" is not this console's (start it with --allowed-host to add a name)";
	if (request.sec_fetch_site == "cross-site" || request.sec_fetch_site == "same-site")
		return "a request from another site";
	return "";
}

std::string RequestGuard::RefuseAction(const RequestFacts &request) const
{
	std::string refused = RefuseRead(request);
	if (!refused.empty())
		return refused;
	if (request.method != "POST")
		return "actions are POST requests";
	if (request.token.empty() || !SameSecret(request.token, token_))
		return "the X-Pgmq-Console-Token header is missing or wrong (reload the page)";
	if (Lower(request.content_type).rfind("application/json", 0) != 0)
		return "an action's body must be application/json";
	if (!request.origin.empty()) {
		std::string origin = Lower(request.origin);
		if (origin != "http://" + Lower(request.host) && origin != "https://" + Lower(request.host))
			return "Origin \"" + request.origin + "\" is not this console";
	}
	return "";
}

std::string NewSessionToken()
{
	std::random_device device;  // /dev/urandom on Linux
	static const char digits[] = "0123456789abcdef";
	std::string token;
	for (int i = 0; i < 8; ++i) {
		unsigned int word = device();
		for (int j = 0; j < 8; ++j, word >>= 4)
			token.push_back(digits[word & 0xF]);
	}
	return token;
}

bool SameSecret(const std::string &a, const std::string &b)
{
	if (a.size() != b.size())
		return false;
	unsigned char differ = 0;
	for (std::size_t i = 0; i < a.size(); ++i)
		differ |= static_cast<unsigned char>(a[i] ^ b[i]);
	return differ == 0;
}

}  // namespace pgmq::console
