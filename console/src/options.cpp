// console/src/options.cpp
#include "pgmq/console/options.hpp"

#include <cerrno>
#include <cstdlib>

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
void ParseListen(const std::string &text, Options &options)
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
		throw OptionsError("--listen: expected HOST:PORT, got \"" + text + "\"");
	options.listen_host = host;
	options.listen_port = ParseInt("--listen", port, 1, 65535);
}

}  // namespace

Options ParseOptions(int argc, const char *const *argv)
{
	Options options;
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
		else if (!arg.empty() && arg[0] == '-')
			throw OptionsError(arg + ": unknown option (see --help)");
		else if (!options.conninfo.empty())
			throw OptionsError("one connection string only, got a second: \"" + arg + "\"");
		else
			options.conninfo = arg;
	}
	if (options.history_seconds < options.sample_seconds)
		throw OptionsError("--history-seconds must be at least --sample-seconds");
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
		   "  --help, -h              this text\n"
		   "Exit status 2: a bad option, a database it cannot reach, or an address it\n"
		   "cannot listen on. See pgmq-console(1), docs/console.md.\n";
}

}  // namespace pgmq::console
