// console/include/pgmq/console/options.hpp
// pgmq-console's command line (docs/console.md#starting-it).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pgmq::console {

struct OptionsError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

struct Options {
	std::string listen_host = "127.0.0.1";
	int listen_port = 8432;
	// Off: the console only reads, its sessions are read-only too.
	bool actions = false;
	int sample_seconds = 10;
	int history_seconds = 3600;
	// Host header values accepted besides the listen address (and, on a
	// loopback address, localhost): the names a proxy or tunnel uses.
	std::vector<std::string> allowed_hosts;
	// A libpq connection string or URI; empty: PGHOST, PGDATABASE... only.
	std::string conninfo;
	bool help = false;
};

// Throws OptionsError naming the option and what it expects.
Options ParseOptions(int argc, const char *const *argv);
std::string Usage();

}  // namespace pgmq::console
