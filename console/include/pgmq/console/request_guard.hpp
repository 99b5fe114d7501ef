// console/include/pgmq/console/request_guard.hpp
// What a request must show before the console answers it, so that another
// site open in the operator's browser can neither read the console (DNS
// rebinding: a foreign name resolving to 127.0.0.1) nor act through it
// (cross-site requests): the Host header must be one of the console's own
// names; a browser's Sec-Fetch-Site, when sent, must not say cross-site;
// an action must be a POST with the session's token in a header (which a
// form cannot send and a foreign script cannot read) and a JSON body, and
// an Origin, when sent, must be the console's own.
#pragma once

#include <string>
#include <vector>

namespace pgmq::console {

struct RequestFacts {
	std::string method;
	std::string host;            // Host header
	std::string origin;          // Origin header, "" when absent
	std::string sec_fetch_site;  // Sec-Fetch-Site header, "" when absent
	std::string token;           // X-Pgmq-Console-Token header, "" when absent
	std::string content_type;
};

class RequestGuard {
  public:
	// listen_host and port as bound; extra_hosts from --allowed-host.
	RequestGuard(const std::string &listen_host, int port, const std::vector<std::string> &extra_hosts,
				 std::string token);

	// "" when a read (GET) may be answered, else why not.
	std::string RefuseRead(const RequestFacts &request) const;
	// "" when an action (POST) may run, else why not.
	std::string RefuseAction(const RequestFacts &request) const;
	const std::string &token() const { return token_; }

  private:
	bool HostAllowed(const std::string &host) const;
	std::vector<std::string> hosts_;
	std::string token_;
};

// 32 random bytes from the system's generator, as 64 hex digits.
std::string NewSessionToken();
// Equal, in a time that does not depend on where they differ.
bool SameSecret(const std::string &a, const std::string &b);

}  // namespace pgmq::console
