// common/pg/connection_settings.cpp
#include "connection_settings.hpp"

#include <fstream>
#include <memory>
#include <regex>
#include <stdexcept>

#include <libpq-fe.h>

namespace pgmq::pg {

bool ConninfoHasPassword(const std::string &conninfo)
{
	char *error = nullptr;
	std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(PQconninfoParse(conninfo.c_str(), &error),
																		  PQconninfoFree);
	if (!options) {
		std::string message = error ? error : "out of memory";
		PQfreemem(error);
		while (!message.empty() && message.back() == '\n')
			message.pop_back();
		throw std::invalid_argument(message);
	}
	for (const PQconninfoOption *o = options.get(); o->keyword; ++o)
		if (std::string(o->keyword) == "password" && o->val && *o->val)
			return true;
	return false;
}

std::string ReadPasswordFile(const std::string &path)
{
	std::ifstream file(path, std::ios::binary);
	std::string line;
	if (!file || !std::getline(file, line))
		throw std::runtime_error(path + " cannot be read");
	if (!line.empty() && line.back() == '\r')
		line.pop_back();
	if (line.empty())
		throw std::runtime_error(path + " starts with an empty line");
	return line;
}

std::string ConnectionHint(const std::string &message, const std::string &password_setting)
{
	std::smatch m;
	static const std::regex host_mismatch(R"re(server certificate for "([^"]*)".* does not match host name "([^"]*)")re");
	if (std::regex_search(message, m, host_mismatch))
		return "sslmode=verify-full checks that the server's certificate names the host connected to, and it names \"" +
			   m.str(1) + "\", not \"" + m.str(2) +
			   "\": set host to the name the certificate carries (the provider's host name, not an IP address)";
	auto has = [&message](const char *text) { return message.find(text) != std::string::npos; };
	if (has("certificate verify failed"))
		return "the server's certificate is not signed by a certificate authority in sslrootcert: set sslrootcert "
			   "(or PGSSLROOTCERT) to the CA certificate of the database's provider";
	if (has("root certificate file"))
		return "set sslrootcert (or PGSSLROOTCERT) to the CA certificate of the database's provider, a file this "
			   "program's user can read";
	if (has("certificate file") || has("private key"))
		return "check sslcert and sslkey (or PGSSLCERT and PGSSLKEY): files this program's user can read, the key "
			   "with mode 0600";
	if (has("valid client certificate") || has("unknown ca") || has("certificate authentication failed") ||
		has("certificate validation"))
		return "the server wants a client certificate it trusts: set sslcert and sslkey to a certificate signed by "
			   "a CA the server trusts, whose common name is the user name";
	if (has("server does not support SSL"))
		return "the server at this host and port offers no TLS: check host and port";
	if (has("no pg_hba.conf entry") && (has("SSL off") || has("no encryption")))
		return "the server takes this connection over TLS only: set sslmode=verify-full and sslrootcert";
	if (has("password authentication failed") || has("no password supplied"))
		return "check the password: " + password_setting + ", PGPASSWORD or PGPASSFILE";
	return "";
}

std::string WithHint(const std::string &libpq_message, const std::string &password_setting)
{
	std::string hint = ConnectionHint(libpq_message, password_setting);
	return hint.empty() ? libpq_message : libpq_message + " -- " + hint;
}

}  // namespace pgmq::pg
