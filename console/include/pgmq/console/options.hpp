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
	// TLS settings are libpq's (sslmode, sslrootcert, ...; or PGSSLMODE, ...).
	// It may hold no password: the command line is every user's to read.
	std::string conninfo;
	// The database password's file (its first line; read by main). Without
	// it libpq's PGPASSWORD or PGPASSFILE apply.
	std::string password_file;
	// Without pgmq-cpp's table rule, read every queue table the role may,
	// whoever owns it (see queries.cpp: the owner rule otherwise).
	bool trust_queue_owners = false;
	bool help = false;
};

// The environment first (a container's configuration: PGMQ_CONSOLE_LISTEN,
// PGMQ_CONSOLE_ALLOW_ACTIONS, PGMQ_CONSOLE_ALLOWED_HOSTS (separated by
// spaces or commas), PGMQ_CONSOLE_PASSWORD_FILE,
// PGMQ_CONSOLE_TRUST_QUEUE_OWNERS; switches take 1/true/yes or 0/false/no),
// then the command line. getenv may be null (no environment). Throws
// OptionsError naming the option or variable and what it expects.
Options ParseOptions(int argc, const char *const *argv, const char *(*getenv)(const char *) = nullptr);
std::string Usage();

}  // namespace pgmq::console
