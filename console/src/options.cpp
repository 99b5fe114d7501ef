// console/src/options.cpp
#include "pgmq/console/options.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "connection_settings.hpp"

namespace pgmq::console {
namespace {

int ParseInt(const std::string &option, const std::string &text, int low, int high)
{
	errno = 0;
	char *end = nullptr;
	long value = std::strtol(text.c_str(), &end, 10);
	if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high)
		throw OptionsError(option + ": expected an integer from " + std::to_string(low) + " to " +
						   std::to_string(high) + ", got \"" + text + "\"");
	return static_cast<int>(value);
}

// HOST:PORT, [IPv6]:PORT or PORT.
void ParseListen(const std::string &text, Options &options, const std::string &option = "--listen")
{
	std::string host = options.listen_host, port = text;
	auto colon = text.rfind(':');
	if (colon != std::string::npos) {
		host = text.substr(0, colon);
		port = text.substr(colon + 1);
		if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
			host = host.substr(1, host.size() - 2);
	}
	if (host.empty())
		throw OptionsError(option + ": expected HOST:PORT, got \"" + text + "\"");
	options.listen_host = host;
	options.listen_port = ParseInt(option, port, 1, 65535);
}

bool ParseSwitch(const std::string &name, const std::string &text)
{
	if (text == "1" || text == "true" || text == "yes")
		return true;
	if (text.empty() || text == "0" || text == "false" || text == "no")
		return false;
	throw OptionsError(name + ": expected 1 or 0 (true or false), got \"" + text + "\"");
}

void ApplyEnvironment(Options &options, const char *(*getenv)(const char *))
{
	auto variable = [getenv](const char *name) -> std::string {
		const char *value = getenv(name);
		return value ? value : "";
	};
	if (std::string listen = variable("PGMQ_CONSOLE_LISTEN"); !listen.empty())
		ParseListen(listen, options, "PGMQ_CONSOLE_LISTEN");
	options.actions = ParseSwitch("PGMQ_CONSOLE_ALLOW_ACTIONS", variable("PGMQ_CONSOLE_ALLOW_ACTIONS"));
	options.trust_queue_owners =
		ParseSwitch("PGMQ_CONSOLE_TRUST_QUEUE_OWNERS", variable("PGMQ_CONSOLE_TRUST_QUEUE_OWNERS"));
	std::string hosts = variable("PGMQ_CONSOLE_ALLOWED_HOSTS");
	for (char &c : hosts)
		if (c == ',')
			c = ' ';
	std::istringstream words(hosts);
	for (std::string host; words >> host;)
		options.allowed_hosts.push_back(host);
	options.password_file = variable("PGMQ_CONSOLE_PASSWORD_FILE");
}

// ps and /proc/PID/cmdline show a command line to every user of the machine.
void RefusePassword(const std::string &conninfo)
{
	bool has_password;
	try {
		has_password = pg::ConninfoHasPassword(conninfo);
	} catch (const std::invalid_argument &e) {
		throw OptionsError("the connection string does not parse: " + std::string(e.what()));
	}
	if (has_password)
		throw OptionsError("the connection string holds a password, which every user of this machine can read on "
						   "the command line: give it in --password-file, PGPASSWORD or PGPASSFILE");
}

}  // namespace

Options ParseOptions(int argc, const char *const *argv, const char *(*getenv)(const char *))
{
	Options options;
	if (getenv)
		ApplyEnvironment(options, getenv);
	for (int i = 1; i < argc; ++i) {
		std::string arg = argv[i];
		auto value = [&]() -> std::string {
			if (i + 1 >= argc)
				throw OptionsError(arg + ": needs a value");
			return argv[++i];
		};
		if (arg == "--help" || arg == "-h")
			options.help = true;
		else if (arg == "--listen")
			ParseListen(value(), options);
		else if (arg == "--allow-actions")
			options.actions = true;
		else if (arg == "--sample-seconds")
			options.sample_seconds = ParseInt(arg, value(), 1, 3600);
		else if (arg == "--history-seconds")
			options.history_seconds = ParseInt(arg, value(), 60, 7 * 24 * 3600);
		else if (arg == "--allowed-host")
			options.allowed_hosts.push_back(value());
		else if (arg == "--password-file")
			options.password_file = value();
		else if (arg == "--trust-queue-owners")
			options.trust_queue_owners = true;
		else if (!arg.empty() && arg[0] == '-')
			throw OptionsError(arg + ": unknown option (see --help)");
		else if (!options.conninfo.empty())
			throw OptionsError("one connection string only, got a second: \"" + arg + "\"");
		else
			options.conninfo = arg;
	}
	if (options.history_seconds < options.sample_seconds)
		throw OptionsError("--history-seconds must be at least --sample-seconds");
	RefusePassword(options.conninfo);
	return options;
}

std::string Usage()
{
	return "usage: pgmq-console [options] [CONNINFO]\n"
		   "Serves an operator's console for the pgmq queues of one database, as the\n"
		   "role CONNINFO (or PGHOST, PGDATABASE, PGUSER...) connects as.\n"
		   "  --listen HOST:PORT      where to serve (default 127.0.0.1:8432)\n"
		   "  --allow-actions         purge, redrive, pause and resume (default: read-only)\n"
		   "  --allowed-host NAME     a Host header to accept besides the listen address\n"
		   "                          (the name of a proxy or tunnel; repeatable)\n"
		   "  --sample-seconds N      how often the rates are sampled (default 10)\n"
		   "  --history-seconds N     how far back the rates go (default 3600)\n"
		   "  --password-file FILE    the database password (or PGPASSWORD, PGPASSFILE; never in\n"
		   "                          CONNINFO, which every user can read on the command line)\n"
		   "  --trust-queue-owners    without pgmq-cpp's table rule (upstream pgmq), read every\n"
		   "                          queue table the role may, whoever owns it (refused for a\n"
		   "                          superuser role)\n"
		   "  --help, -h              this text\n"
		   "Environment: PGMQ_CONSOLE_LISTEN, PGMQ_CONSOLE_ALLOW_ACTIONS, PGMQ_CONSOLE_ALLOWED_HOSTS,\n"
		   "PGMQ_CONSOLE_PASSWORD_FILE, PGMQ_CONSOLE_TRUST_QUEUE_OWNERS (options win); libpq's PG*.\n"
		   "Exit status 2: a bad option, a database it cannot reach, or an address it\n"
		   "cannot listen on. See pgmq-console(1), docs/console.md.\n";
}

}  // namespace pgmq::console
