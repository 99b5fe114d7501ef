// console/src/main.cpp
// pgmq-console: an operator's console for the pgmq queues of one database
// (docs/console.md). Exit status: 0 after SIGTERM/SIGINT, 2 for bad options,
// an unreachable database or an address it cannot bind, 1 otherwise.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "connection_settings.hpp"
#include "console_server.hpp"
#include "pgmq/console/api_error.hpp"
#include "sampler.hpp"

using namespace pgmq::console;

namespace {

// Sessions for the page's requests: an overview, a queue's page and an
// action at once, with room for a second operator.
constexpr std::size_t kSessions = 4;

}  // namespace

int main(int argc, char **argv)
{
	Options options;
	std::string password;
	try {
		options = ParseOptions(argc, argv, [](const char *name) -> const char * { return std::getenv(name); });
		if (!options.help && !options.password_file.empty())
			password = pgmq::pg::ReadPasswordFile(options.password_file);
	} catch (const OptionsError &e) {
		std::fprintf(stderr, "pgmq-console: %s\n", e.what());
		return 2;
	} catch (const std::runtime_error &e) {
		std::fprintf(stderr, "pgmq-console: --password-file: %s\n", e.what());
		return 2;
	}
	if (options.help) {
		std::fputs(Usage().c_str(), stdout);
		return 0;
	}
	// Signals are taken by a thread of ours, blocked everywhere else.
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
	signal(SIGPIPE, SIG_IGN);

	Pool pool(options.conninfo, password, !options.actions, kSessions);
	RateHistory rates(static_cast<std::size_t>(options.history_seconds / options.sample_seconds));
	RequestGuard guard(options.listen_host, options.listen_port, options.allowed_hosts, NewSessionToken());
	ConsoleApi api(pool, rates, options, guard.token());
	nlohmann::json session;
	try {
		std::string offers = api.Start();
		std::fprintf(stderr, "pgmq-console: %s\n", offers.c_str());
		session = api.Session();
	} catch (const ApiError &e) {
		std::fprintf(stderr, "pgmq-console: %s\n", e.what());
		return 2;
	}
	ConsoleServer server(api, guard);
	if (!server.Bind(options.listen_host, options.listen_port)) {
		std::fprintf(stderr, "pgmq-console: cannot listen on %s:%d\n", options.listen_host.c_str(), options.listen_port);
		return 2;
	}
	Sampler sampler(options.conninfo, password, options.sample_seconds, rates);
	std::thread signals([&] {
		int received = 0;
		sigwait(&stop_signals, &received);
		server.Stop();
	});
	std::string host = options.listen_host.find(':') != std::string::npos ? "[" + options.listen_host + "]"
																		  : options.listen_host;
	std::fprintf(stderr, "pgmq-console: serving http://%s:%d/ as role %s on database %s (%s)\n", host.c_str(),
				 options.listen_port, session.value("role", "").c_str(), session.value("database", "").c_str(),
				 options.actions ? "actions allowed" : "read-only");
	server.Serve();
	// Serve returned: a signal stopped it, or listening failed, and then
	// this one ends the signal thread (blocked here, it waits for the exit).
	kill(getpid(), SIGTERM);
	signals.join();
	return 0;
}
