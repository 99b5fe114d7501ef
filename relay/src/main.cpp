// relay/src/main.cpp
// pgmq-relay: the outbox relay from pgmq queues to RabbitMQ. Configuration,
// signals, one worker thread per queue, the periodic report and /metrics.
// Exit status: 0 after SIGTERM/SIGINT (in-flight batches finished) or a
// finished --drain, 2 for a bad configuration or a queue that does not
// exist, 1 for anything else.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "log.hpp"
#include "metrics_server.hpp"
#include "pgmq/relay/amqp_url.hpp"
#include "pgmq/relay/config.hpp"
#include "pgmq/relay/metrics.hpp"
#include "stop_signal.hpp"
#include "worker.hpp"

using namespace pgmq::relay;

namespace {

std::optional<Config> LoadConfiguration(int argc, char **argv)
{
	CommandLine line = ParseCommandLine(argc, argv);
	if (line.help) {
		std::fputs(Usage().c_str(), stdout);
		return std::nullopt;
	}
	// Assigned rather than built from a conditional: GCC 12 at -O2 cannot
	// follow a Config constructed on two paths and warns that its strings may
	// be destroyed uninitialized.
	Config config;
	if (!line.config_path.empty())
		config = LoadConfigFile(line.config_path);
	// The file, then the environment (a container's), then the flags.
	ApplyEnvironment(config, [](const char *name) -> const char * { return std::getenv(name); });
	ApplyOverrides(line, config);
	ResolvePassword(config.broker, std::getenv(kPasswordEnvironment));
	ResolvePostgresPassword(config);
	Validate(config);
	return config;
}

std::vector<QueueSnapshot> Snapshots(const std::deque<QueueCounters> &counters)
{
	std::vector<QueueSnapshot> snapshots;
	for (const auto &c : counters)
		snapshots.push_back(c.Snapshot());
	return snapshots;
}

}  // namespace

int main(int argc, char **argv)
{
	std::optional<Config> loaded;
	try {
		loaded = LoadConfiguration(argc, argv);
	} catch (const ConfigError &e) {
		// One line: where, which key, what was expected (--help has the rest).
		std::fprintf(stderr, "pgmq-relay: %s\n", e.what());
		return 2;
	}
	if (!loaded)
		return 0;
	const Config &config = *loaded;

	// Signals are taken by the main thread only (sigtimedwait below): every
	// thread started from here inherits the blocked mask.
	sigset_t signals;
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &signals, nullptr);
	signal(SIGPIPE, SIG_IGN);  // a broker that went away must be an error, not a death

	std::deque<QueueCounters> counters;  // deque: stable addresses for the workers
	for (const auto &queue : config.queues)
		counters.emplace_back(queue.name, DescribeSource(queue));

	std::unique_ptr<MetricsServer> metrics;
	if (!config.metrics_listen.empty()) {
		try {
			auto [host, port] = SplitListenAddress(config.metrics_listen);
			metrics = std::make_unique<MetricsServer>(host, port,
													  [&counters] { return FormatPrometheus(Snapshots(counters)); });
			LogInfo("metrics at http://" + config.metrics_listen + "/metrics");
		} catch (const std::exception &e) {
			LogError(e.what());
			return 2;
		}
	}

	StopSignal stop;
	std::atomic<int> running{static_cast<int>(config.queues.size())};
	std::atomic<bool> failed{false}, missing_queue{false};
	std::vector<std::thread> threads;
	for (std::size_t i = 0; i < config.queues.size(); i++) {
		threads.emplace_back([&, i] {
			try {
				Worker(config, config.queues[i], counters[i], stop).Run();
			} catch (const MissingQueue &e) {
				LogError(e.what());
				missing_queue = true;
				stop.Request();
			} catch (const std::exception &e) {
				LogError("queue " + config.queues[i].name + ": " + e.what());
				failed = true;
				stop.Request();
			}
			running--;
		});
	}
	LogInfo("pgmq-relay started: " + std::to_string(config.queues.size()) + " queue(s), batch size " +
			std::to_string(config.batch_size) + ", visibility timeout " + std::to_string(config.visibility_timeout_s) +
			" s");

	std::vector<QueueSnapshot> previous = Snapshots(counters);
	auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(config.report_interval_s);
	timespec tick{0, 200 * 1000 * 1000};
	while (running > 0) {
		int sig = sigtimedwait(&signals, nullptr, &tick);
		if (sig > 0 && !stop.requested()) {
			LogInfo(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": finishing the batches in flight");
			stop.Request();
		}
		if (config.report_interval_s > 0 && std::chrono::steady_clock::now() >= next_report) {
			std::vector<QueueSnapshot> current = Snapshots(counters);
			for (std::size_t i = 0; i < current.size(); i++)
				LogInfo(FormatReportLine(previous[i], current[i]));
			previous = current;
			next_report += std::chrono::seconds(config.report_interval_s);
		}
	}
	for (auto &t : threads)
		t.join();
	if (metrics)
		metrics->Stop();
	if (missing_queue)
		return 2;  // the ERROR line said which queue; nothing was relayed past it
	std::vector<QueueSnapshot> current = Snapshots(counters);
	for (std::size_t i = 0; i < current.size(); i++)
		LogInfo(FormatReportLine(previous[i], current[i]));
	LogInfo(failed ? "pgmq-relay stopped after an error" : "pgmq-relay stopped");
	return failed ? 1 : 0;
}
