// relay/src/command_line.cpp
// The command line: --config FILE and the flags that override it.
#include <set>
#include <stdexcept>

#include "config_internal.hpp"
#include "connection_settings.hpp"
#include "pgmq/relay/amqp_url.hpp"

namespace pgmq::relay {
namespace {

using namespace config_detail;

long long ParseIntFlag(const std::string &flag, const std::string &value, long long min, long long max)
{
	if (value.empty() || value.size() > 12 || value.find_first_not_of("0123456789") != std::string::npos)
		Fail(flag, "must be a whole number");
	long long number = std::stoll(value);
	if (number < min || number > max)
		Fail(flag, "must be between " + std::to_string(min) + " and " + std::to_string(max));
	return number;
}

// ps and /proc/PID/cmdline show a command line to every user of the machine.
void RefusePasswordIn(const std::string &conninfo)
{
	bool has_password;
	try {
		has_password = pg::ConninfoHasPassword(conninfo);
	} catch (const std::invalid_argument &e) {
		Fail("--postgres", e.what());
	}
	if (has_password)
		Fail("--postgres", "holds a password, which every user of this machine can read on the command line: give it "
						   "in --postgres-password-file, PGPASSWORD or PGPASSFILE");
}

}  // namespace

CommandLine ParseCommandLine(int argc, const char *const *argv)
{
	// Flags that take a value; the others are switches.
	static const std::set<std::string> with_value = {
		"--config",          "--postgres",          "--postgres-password-file", "--amqp-url",
		"--amqp-password-file", "--queue",   "--group",          "--exchange",        "--routing-key",
		"--dead-letter-queue", "--batch-size",      "--batch-max-bytes", "--vt",
		"--poll",            "--confirm-timeout",   "--metrics-listen",  "--report-interval"};
	static const std::set<std::string> switches = {"--archive", "--subscribe", "--drain", "--create-dead-letter-queues", "--help"};
	CommandLine line;
	for (int i = 1; i < argc; i++) {
		std::string arg = argv[i];
		std::string value;
		bool has_value = false;
		auto eq = arg.find('=');
		if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
			value = arg.substr(eq + 1);
			arg = arg.substr(0, eq);
			has_value = true;
		}
		if (switches.count(arg)) {
			if (has_value)
				Fail(arg, "takes no value");
			if (arg == "--help")
				line.help = true;
			else
				line.overrides.emplace_back(arg, "");
			continue;
		}
		if (!with_value.count(arg))
			Fail(arg, "unknown option (see --help)");
		if (!has_value) {
			if (i + 1 >= argc)
				Fail(arg, "needs a value");
			value = argv[++i];
		}
		if (arg == "--config")
			line.config_path = value;
		else
			line.overrides.emplace_back(arg, value);
	}
	return line;
}

void ApplyOverrides(const CommandLine &line, Config &config)
{
	// --queue on the command line replaces the file's list; --exchange,
	// --routing-key and --archive refine the --queue before them. The
	// --amqp-url flags together replace the file's broker addresses.
	bool replaced_queues = false;
	std::vector<std::string> urls;
	auto last_queue = [&](const std::string &flag) -> QueueConfig & {
		if (!replaced_queues)
			Fail(flag, "must follow a --queue");
		return config.queues.back();
	};
	for (const auto &[flag, value] : line.overrides) {
		if (flag == "--postgres") {
			RefusePasswordIn(value);
			config.postgres = value;
		} else if (flag == "--postgres-password-file") {
			config.postgres_password_file = value;
		} else if (flag == "--create-dead-letter-queues") {
			config.create_dead_letter_queues = true;
		} else if (flag == "--amqp-url") {
			urls.push_back(value);
		} else if (flag == "--amqp-password-file") {
			config.broker.password_file = value;
		} else if (flag == "--dead-letter-queue") {
			CheckQueueName(value, flag);
			(replaced_queues ? config.queues.back().dead_letter_queue : config.dead_letter_queue) = value;
		} else if (flag == "--queue") {
			if (!replaced_queues)
				config.queues.clear();
			replaced_queues = true;
			CheckQueueName(value, flag);
			QueueConfig queue;
			queue.name = value;
			queue.routing_key = value;
			config.queues.push_back(queue);
		} else if (flag == "--exchange") {
			CheckShortString(value, flag);
			last_queue(flag).exchange = value;
		} else if (flag == "--routing-key") {
			CheckShortString(value, flag);
			last_queue(flag).routing_key = value.empty() ? last_queue(flag).name : value;
		} else if (flag == "--group") {
			if (value.empty())
				Fail(flag, "must be a consumer group's name (not empty)");
			last_queue(flag).group = value;
		} else if (flag == "--subscribe") {
			if (last_queue(flag).group.empty())
				Fail(flag, "must follow a --group");
			last_queue(flag).subscribe = true;
		} else if (flag == "--archive") {
			last_queue(flag).after_confirm = AfterConfirm::Archive;
		} else if (flag == "--batch-size") {
			config.batch_size = static_cast<int>(ParseIntFlag(flag, value, 1, 10000));
		} else if (flag == "--batch-max-bytes") {
			config.batch_max_bytes = ParseIntFlag(flag, value, kMinBatchBytes, kMaxBatchBytes);
		} else if (flag == "--vt") {
			config.visibility_timeout_s = static_cast<int>(ParseIntFlag(flag, value, 1, 86400));
		} else if (flag == "--poll") {
			config.poll_s = static_cast<int>(ParseIntFlag(flag, value, 0, 3600));
		} else if (flag == "--confirm-timeout") {
			config.broker.confirm_timeout_ms = static_cast<int>(ParseIntFlag(flag, value, 10, 600000));
		} else if (flag == "--metrics-listen") {
			config.metrics_listen = value;
		} else if (flag == "--report-interval") {
			config.report_interval_s = static_cast<int>(ParseIntFlag(flag, value, 0, 86400));
		} else if (flag == "--drain") {
			config.drain = true;
		} else {
			Fail(flag, "unknown option");
		}
	}
	if (!urls.empty()) {
		try {
			ApplyAmqpUrls(urls, config.broker);
		} catch (const ConfigError &e) {
			Fail("--amqp-url", e.what());
		}
	}
}

std::string Usage()
{
	return "usage: pgmq-relay [--config FILE] [options]\n"
		   "Relays pgmq queues to RabbitMQ with publisher confirms; deletes (or archives)\n"
		   "a message only after the broker confirmed it. See pgmq-relay(1), docs/relay.md.\n"
		   "\n"
		   "  --config FILE            JSON configuration (flags below override it)\n"
		   "  --postgres CONNINFO      libpq connection string, TLS settings included (no password:\n"
		   "                           every user can read a command line)\n"
		   "  --postgres-password-file F  the database password (or PGPASSWORD, PGPASSFILE)\n"
		   "  --amqp-url URL           amqp[s]://user@host:port/vhost (repeat for a cluster's nodes)\n"
		   "  --amqp-password-file F   the broker password (or PGMQ_RELAY_AMQP_PASSWORD)\n"
		   "  --queue NAME             relay this queue (repeatable; replaces the file's list)\n"
		   "    --group NAME           ... which is a stream: read it as this consumer group,\n"
		   "                           acknowledge (pgmq.ack) after the confirm\n"
		   "      --subscribe          ... subscribing the group at start if it does not exist\n"
		   "    --exchange NAME        ... to this exchange (default: the default exchange \"\")\n"
		   "    --routing-key KEY      ... with this routing key (default: the queue's name)\n"
		   "    --archive              ... and archive instead of delete after the confirm\n"
		   "    --dead-letter-queue Q  ... and move refused messages to pgmq queue Q\n"
		   "                           (before any --queue: for every queue)\n"
		   "  --create-dead-letter-queues  make a missing dead-letter queue with pgmq.create\n"
		   "  --batch-size N           messages per read (default 100)\n"
		   "  --batch-max-bytes N      bytes per read (default 8388608)\n"
		   "  --vt SECONDS             visibility timeout of a read (default 30)\n"
		   "  --poll SECONDS           read_with_poll's max_poll_seconds (default 5)\n"
		   "  --confirm-timeout MS     wait for confirms this long (default 10000)\n"
		   "  --metrics-listen H:P     serve Prometheus text at http://H:P/metrics\n"
		   "  --report-interval S      periodic log line every S seconds (default 10, 0 = off)\n"
		   "  --drain                  exit 0 once every queue has been read empty\n"
		   "  --help                   this text\n"
		   "Environment: PGMQ_RELAY_METRICS_LISTEN, PGMQ_RELAY_POSTGRES_PASSWORD_FILE and\n"
		   "PGMQ_RELAY_AMQP_PASSWORD; libpq's PG* variables when the connection string is empty.\n"
		   "Exit status 2: a bad configuration, or a queue (stream, group) that does not exist.\n";
}

}  // namespace pgmq::relay
