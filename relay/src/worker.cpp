// relay/src/worker.cpp
// The loop and its connections; a batch's way is in worker_batch.cpp.
#include "worker.hpp"

#include <algorithm>
#include <atomic>

#include "log.hpp"

namespace pgmq::relay {
namespace {

// How often the queue's length and lag are asked for (pgmq.metrics counts
// the queue table, so not after every batch).
constexpr auto kMetricsEvery = std::chrono::seconds(5);

std::string Describe(const BrokerAddress &address)
{
	bool ipv6 = address.host.find(':') != std::string::npos;
	return (ipv6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

}  // namespace

Worker::Worker(const Config &config, const QueueConfig &queue, QueueCounters &counters, StopSignal &stop)
	: config_(config), queue_(queue), dead_letter_queue_(DeadLetterQueueOf(config, queue)), counters_(counters),
	  stop_(stop), pg_backoff_(config.backoff_initial_ms, config.backoff_max_ms),
	  broker_backoff_(config.backoff_initial_ms, config.backoff_max_ms), read_size_(config.batch_size),
	  random_(std::random_device{}())
{
}

void Worker::Wait(Backoff &backoff, const std::string &what, const std::string &why)
{
	int delay = backoff.NextDelayMs(std::uniform_real_distribution<double>(0.0, 1.0)(random_));
	LogWarning(Prefix() + what + ": " + why + "; retrying in " + std::to_string(delay) + " ms");
	stop_.SleepFor(delay);
}

void Worker::Missing(const PgError &error)
{
	throw MissingQueue(Prefix() + error.what());
}

void Worker::CheckDatabase()
{
	pg::PgmqFeatures features = pg_->Features();
	std::vector<std::string> needed =
		queue_.is_stream()
			? std::vector<std::string>{"read_stream_with_poll", "read_stream", "ack", "stream_groups", "send"}
			: std::vector<std::string>{"read_with_poll", "read", "delete", "archive", "set_vt", "send", "metrics"};
	if (queue_.is_stream() && queue_.subscribe)
		needed.push_back("subscribe");
	if (config_.create_dead_letter_queues)
		needed.push_back("create");
	std::vector<std::string> missing = features.Missing(needed);
	for (auto &name : missing)
		name = "pgmq." + name;
	if (queue_.is_stream() && !features.streams && features.present && !features.pgmq_cpp)
		throw MissingQueue(Prefix() + "streams are not available with " + pg::ShortName(features) +
						   " (they need pgmq-cpp): relay the stream from a database with pgmq-cpp, or relay a queue");
	if (!missing.empty())
		throw MissingQueue(Prefix() + "the database offers " + pg::Describe(features) + ", which lacks " +
						   pg::JoinWords(missing) +
						   (queue_.is_stream() ? " (streams need a pgmq-cpp that has them)"
											   : " (install pgmq: upstream 1.8 or later, or pgmq-cpp)"));
	// Once for the process, not per queue and reconnect.
	static std::atomic<bool> said{false};
	if (!said.exchange(true))
		LogInfo("the database offers " + pg::Describe(features) +
				(queue_.is_stream() || std::any_of(config_.queues.begin(), config_.queues.end(),
												   [](const QueueConfig &q) { return q.is_stream(); })
					 ? "; a stream's consumer group is read with pgmq-cpp's read_stream_with_poll and ack, a "
					   "queue with functions upstream pgmq has too (a dead-letter queue is a plain queue)"
					 : "; the relay uses only functions upstream pgmq has too (a dead-letter queue is a plain queue)"));
}

void Worker::CheckQueuesExist()
{
	if (queue_.is_stream())
		CheckGroup();
	for (const std::string *name : {&queue_.name, &dead_letter_queue_}) {
		if (name->empty() || (name == &queue_.name && queue_.is_stream()) || pg_->QueueExists(*name))
			continue;
		if (name == &dead_letter_queue_ && config_.create_dead_letter_queues) {
			pg_->CreateQueue(*name);
			LogInfo(Prefix() + "created its dead_letter_queue \"" + *name + "\" with pgmq.create");
			continue;
		}
		throw MissingQueue(Prefix() + (name == &queue_.name ? "" : "its dead_letter_queue ") + "\"" + *name +
						   "\" does not exist in the database (create it with pgmq.create, or correct the name)");
	}
}

void Worker::CheckGroup()
{
	bool exists;
	try {
		exists = pg_->GroupExists(queue_.name, queue_.group);
	} catch (const PgError &e) {
		// No such stream (or a queue that is not one): no retry mends it.
		if (e.connection_lost())
			throw;
		throw MissingQueue(Prefix() + e.primary() + " (make a stream with pgmq.create_stream, or correct the name)");
	}
	if (exists)
		return;
	if (!queue_.subscribe)
		throw MissingQueue(Prefix() + "group \"" + queue_.group + "\" is not subscribed to stream \"" + queue_.name +
						   "\" (subscribe it with pgmq.subscribe, or set \"subscribe\": true)");
	try {
		pg_->Subscribe(queue_.name, queue_.group, queue_.since);
	} catch (const PgError &e) {
		if (e.connection_lost())
			throw;
		throw MissingQueue(Prefix() + "cannot subscribe group \"" + queue_.group + "\" to stream \"" + queue_.name +
						   "\": " + e.primary());
	}
	LogInfo(Prefix() + "subscribed group \"" + queue_.group + "\" to stream \"" + queue_.name + "\" with pgmq.subscribe" +
			(queue_.since.empty() ? " (the messages that commit from now on)" : " (since " + queue_.since + ")"));
}

bool Worker::Drained()
{
	if (!queue_.is_stream())
		return true;
	// A group's empty read does not mean an empty group: leased messages
	// (read beyond batch_max_bytes, unconfirmed, or another reader's) come
	// back when their lease runs out.
	RefreshQueueMetrics(true);
	if (pg_ && counters_.queue_length == 0)
		return true;
	stop_.SleepFor(config_.poll_interval_ms);  // poll_s 0 must not spin
	return false;
}

void Worker::Release(const std::vector<std::int64_t> &ids)
{
	if (ids.empty())
		return;
	pg_->Release(queue_.name, queue_.group, ids);
}

bool Worker::EnsurePostgres()
{
	if (pg_)
		return true;
	try {
		pg_ = std::make_unique<PgConnection>(config_.postgres, config_.postgres_password, Prefix());
		CheckDatabase();
		CheckQueuesExist();
	} catch (const PgError &e) {
		pg_.reset();
		Wait(pg_backoff_, "cannot connect to PostgreSQL", e.what());
		return false;
	}
	counters_.postgres_connects++;
	counters_.postgres_up = true;
	LogInfo(Prefix() + "PostgreSQL connected (backend pid " + std::to_string(pg_->backend_pid()) + ")");
	return true;
}

bool Worker::EnsureBroker(bool wait_on_failure)
{
	if (broker_)
		return true;
	const auto &addresses = config_.broker.addresses;
	std::string errors;
	for (std::size_t tried = 0; tried < addresses.size(); tried++) {
		const BrokerAddress &address = addresses[next_address_];
		try {
			broker_ = std::make_unique<AmqpConnection>(
				config_.broker, address,
				"pgmq-relay " + queue_.name + (queue_.is_stream() ? " group " + queue_.group : ""), watchdog_);
		} catch (const AmqpError &e) {
			errors += (errors.empty() ? "" : "; ") + Describe(address) + ": " + e.what();
			next_address_ = (next_address_ + 1) % addresses.size();
			continue;
		}
		counters_.broker_connects++;
		counters_.broker_up = true;
		LogInfo(Prefix() + "broker connected (" + Describe(address) +
				(config_.broker.tls.enabled ? ", TLS" : "") + ", confirm mode)");
		return true;
	}
	if (wait_on_failure)
		Wait(broker_backoff_, "cannot connect to the broker", errors);
	else
		LogWarning(Prefix() + "cannot connect to the broker: " + errors);
	return false;
}

void Worker::DropPostgres(const std::string &why, bool lost)
{
	// Either way the connection is replaced: after a failed statement a new
	// session is the simplest state to be sure of.
	LogWarning(Prefix() + (lost ? "PostgreSQL connection lost: " : "PostgreSQL error, reconnecting: ") + why);
	pg_.reset();
	counters_.postgres_up = false;
	// The backoff is reset by a successful read, not by a connect: a
	// connection that connects and then fails at once must not spin.
}

void Worker::DropBroker(const std::string &why)
{
	if (!why.empty())
		LogWarning(Prefix() + "broker connection lost: " + why);
	broker_.reset();
	counters_.broker_up = false;
	// The next connect goes to the next address: the node may be the problem.
	next_address_ = (next_address_ + 1) % config_.broker.addresses.size();
}

void Worker::RefreshQueueMetrics(bool force)
{
	auto now = std::chrono::steady_clock::now();
	if (!pg_ || (!force && now - metrics_at_ < kMetricsEvery))
		return;
	metrics_at_ = now;
	try {
		std::int64_t length = -1, age = -1;
		if (queue_.is_stream())
			pg_->GroupMetrics(queue_.name, queue_.group, length, age);
		else
			pg_->Metrics(queue_.name, length, age);
		counters_.queue_length = length;
		counters_.lag_seconds = age;
	} catch (const PgError &e) {
		if (e.missing_queue())
			Missing(e);
		DropPostgres(e.what(), e.connection_lost());
	}
}

void Worker::Run()
{
	LogInfo(Prefix() + "relaying to exchange \"" + queue_.exchange + "\", routing key \"" + queue_.routing_key +
			"\", " +
			(queue_.is_stream() ? "pgmq.ack"
								: queue_.after_confirm == AfterConfirm::Archive ? "archive" : "delete") +
			" after confirm" +
			(dead_letter_queue_.empty() ? "" : ", dead letters to \"" + dead_letter_queue_ + "\""));
	while (!stop_.requested()) {
		if (!EnsurePostgres() || !EnsureBroker(true))
			continue;
		RefreshQueueMetrics(false);
		if (!pg_)
			continue;
		ReadBatch read;
		try {
			read = pg_->ReadWithPoll(queue_.name, queue_.group, config_.visibility_timeout_s,
									 queue_.is_stream() ? read_size_.next() : config_.batch_size, config_.poll_s,
									 config_.poll_interval_ms, config_.batch_max_bytes);
			// Read beyond the byte limit: visible again for the next batch
			// (a stream's group reads fewer next). A stream's come back once
			// the batch is acknowledged: in an ordered group a release returns
			// the whole lease, which another relay could take at once.
			if (!queue_.is_stream())
				Release(read.over_budget);
			read_size_.After(read.messages.size(), read.over_budget.size());
		} catch (const PgError &e) {
			if (e.missing_queue())
				Missing(e);
			DropPostgres(e.what(), e.connection_lost());
			Wait(pg_backoff_, "read failed", "reconnecting");
			continue;
		}
		pg_backoff_.Reset();
		if (read.messages.empty()) {
			if (config_.drain && Drained()) {
				LogInfo(Prefix() + "drained");
				break;
			}
			try {
				broker_->Pump();
				counters_.broker_blocked = broker_->blocked();
			} catch (const AmqpError &e) {
				DropBroker(e.what());
			}
			continue;
		}
		// A batch once read is always finished, even after a stop request:
		// SIGTERM waits for the confirms and the delete of what is in flight.
		RelayBatch(read.messages);
		if (queue_.is_stream() && pg_) {
			try {
				Release(read.over_budget);
			} catch (const PgError &e) {
				DropPostgres(e.what(), e.connection_lost());
			}
		}
	}
	RefreshQueueMetrics(true);
}

}  // namespace pgmq::relay
