// relay/src/worker.cpp
#include "worker.hpp"

#include "log.hpp"

namespace pgmq::relay {
namespace {

// How often the queue's length and lag are asked for (pgmq.metrics counts
// the queue table, so not after every batch).
constexpr auto kMetricsEvery = std::chrono::seconds(5);

}  // namespace

Worker::Worker(const Config &config, const QueueConfig &queue, QueueCounters &counters, StopSignal &stop)
	: config_(config), queue_(queue), counters_(counters), stop_(stop),
	  pg_backoff_(config.backoff_initial_ms, config.backoff_max_ms),
	  broker_backoff_(config.backoff_initial_ms, config.backoff_max_ms), random_(std::random_device{}())
{
}

void Worker::Wait(Backoff &backoff, const std::string &what, const std::string &why)
{
	int delay = backoff.NextDelayMs(std::uniform_real_distribution<double>(0.0, 1.0)(random_));
	LogWarning(Prefix() + what + ": " + why + "; retrying in " + std::to_string(delay) + " ms");
	stop_.SleepFor(delay);
}

bool Worker::EnsurePostgres()
{
	if (pg_)
		return true;
	try {
		pg_ = std::make_unique<PgConnection>(config_.postgres);
	} catch (const PgError &e) {
		Wait(pg_backoff_, "cannot connect to PostgreSQL", e.what());
		return false;
	}
	counters_.postgres_connects++;
	counters_.postgres_up = true;
	LogInfo(Prefix() + "PostgreSQL connected (backend pid " + std::to_string(pg_->backend_pid()) + ")");
	return true;
}

bool Worker::EnsureBroker()
{
	if (broker_)
		return true;
	try {
		broker_ = std::make_unique<AmqpConnection>(config_.broker);
	} catch (const AmqpError &e) {
		Wait(broker_backoff_, "cannot connect to the broker", e.what());
		return false;
	}
	counters_.broker_connects++;
	counters_.broker_up = true;
	LogInfo(Prefix() + "broker connected (" + config_.broker.host + ":" + std::to_string(config_.broker.port) +
			", confirm mode)");
	return true;
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
	LogWarning(Prefix() + "broker connection lost: " + why);
	broker_.reset();
	counters_.broker_up = false;
}

void Worker::RefreshQueueMetrics(bool force)
{
	auto now = std::chrono::steady_clock::now();
	if (!pg_ || (!force && now - metrics_at_ < kMetricsEvery))
		return;
	metrics_at_ = now;
	try {
		std::int64_t length = -1, age = -1;
		pg_->Metrics(queue_.name, length, age);
		counters_.queue_length = length;
		counters_.lag_seconds = age;
	} catch (const PgError &e) {
		DropPostgres(e.what(), e.connection_lost());
	}
}

void Worker::Run()
{
	LogInfo(Prefix() + "relaying to exchange \"" + queue_.exchange + "\", routing key \"" + queue_.routing_key +
			"\", " + (queue_.after_confirm == AfterConfirm::Archive ? "archive" : "delete") + " after confirm");
	while (!stop_.requested()) {
		if (!EnsurePostgres() || !EnsureBroker())
			continue;
		RefreshQueueMetrics(false);
		if (!pg_)
			continue;
		std::vector<QueueMessage> batch;
		try {
			batch = pg_->ReadWithPoll(queue_.name, config_.visibility_timeout_s, config_.batch_size, config_.poll_s,
									  config_.poll_interval_ms);
		} catch (const PgError &e) {
			DropPostgres(e.what(), e.connection_lost());
			Wait(pg_backoff_, "read failed", "reconnecting");
			continue;
		}
		pg_backoff_.Reset();
		if (batch.empty()) {
			if (config_.drain) {
				LogInfo(Prefix() + "drained");
				break;
			}
			try {
				broker_->Pump();
			} catch (const AmqpError &e) {
				DropBroker(e.what());
			}
			continue;
		}
		// A batch once read is always finished, even after a stop request:
		// SIGTERM waits for the confirms and the delete of what is in flight.
		RelayBatch(batch);
	}
	RefreshQueueMetrics(true);
}

void Worker::RelayBatch(const std::vector<QueueMessage> &batch)
{
	counters_.read += batch.size();
	tracker_.Start(broker_->next_tag());
	std::string broker_failure;
	try {
		for (const QueueMessage &message : batch) {
			Outgoing out = PrepareMessage(queue_, message);
			if (!out.warning.empty())
				LogWarning(Prefix() + "message " + out.message_id + ": " + out.warning);
			broker_->Publish(queue_.exchange, out, message);
			tracker_.Published(out.message_id);
			counters_.published++;
			counters_.confirms_pending = static_cast<std::int64_t>(tracker_.pending());
		}
		auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.broker.confirm_timeout_ms);
		broker_->WaitConfirms(tracker_, deadline);
	} catch (const AmqpError &e) {
		broker_failure = e.what();
	}
	counters_.confirms_pending = 0;

	BatchOutcome outcome = Classify(tracker_, batch.size());
	std::vector<std::int64_t> confirmed, not_confirmed;
	for (std::size_t i : outcome.confirmed)
		confirmed.push_back(batch[i].msg_id);
	for (std::size_t i : outcome.not_confirmed)
		not_confirmed.push_back(batch[i].msg_id);
	std::size_t returned = outcome.returned, nacked = outcome.nacked;
	counters_.confirmed += confirmed.size();
	counters_.returned += returned;
	counters_.nacked += nacked;
	counters_.unconfirmed += outcome.unanswered;
	if (returned)
		LogWarning(Prefix() + std::to_string(returned) + " message(s) unroutable (basic.return from exchange \"" +
				   queue_.exchange + "\"): left in the queue, retried after the visibility timeout");
	if (nacked)
		LogWarning(Prefix() + std::to_string(nacked) +
				   " message(s) refused by the broker (basic.nack): left in the queue, retried after the visibility "
				   "timeout");

	// Only now, and only the confirmed ones. If this fails they are published
	// again later, with the same message-id: the one kind of duplicate.
	if (!confirmed.empty()) {
		try {
			counters_.relayed += pg_->Remove(queue_.name, confirmed, queue_.after_confirm == AfterConfirm::Archive);
		} catch (const PgError &e) {
			DropPostgres(std::string(e.what()) + " (" + std::to_string(confirmed.size()) +
							 " confirmed message(s) stay in the queue and will be published again with the same "
							 "message-id)",
						 e.connection_lost());
		}
	}
	if (!broker_failure.empty()) {
		DropBroker(broker_failure);
		// No answer is no confirm: make them visible again at once rather than
		// after the visibility timeout (if this fails, the timeout does it).
		if (pg_ && !not_confirmed.empty()) {
			try {
				pg_->Release(queue_.name, not_confirmed);
			} catch (const PgError &e) {
				DropPostgres(e.what(), e.connection_lost());
			}
		}
		// Backoff also when the connect works and the publish fails (an
		// exchange that does not exist closes the channel every time).
		Wait(broker_backoff_, "publish failed", "reconnecting");
	} else {
		broker_backoff_.Reset();
	}
}

}  // namespace pgmq::relay
