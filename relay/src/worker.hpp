// relay/src/worker.hpp
// One queue's relay loop, on a thread of its own with its own PostgreSQL and
// broker connections: read a batch (read_with_poll, vt covering publish and
// confirm), publish it, wait for the confirms, then delete or archive exactly
// the confirmed messages. Anything else stays in the queue and comes back.
#pragma once

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "amqp_client.hpp"
#include "pg_client.hpp"
#include "pgmq/relay/backoff.hpp"
#include "pgmq/relay/config.hpp"
#include "pgmq/relay/confirms.hpp"
#include "pgmq/relay/metrics.hpp"
#include "stop_signal.hpp"

namespace pgmq::relay {

class Worker {
  public:
	Worker(const Config &config, const QueueConfig &queue, QueueCounters &counters, StopSignal &stop);

	// Returns after a stop request (the batch in flight finished first), or
	// in drain mode once a read found the queue empty.
	void Run();

  private:
	bool EnsurePostgres();
	bool EnsureBroker();
	void RelayBatch(const std::vector<QueueMessage> &batch);
	void RefreshQueueMetrics(bool force);
	void DropPostgres(const std::string &why, bool lost);
	void DropBroker(const std::string &why);
	void Wait(Backoff &backoff, const std::string &what, const std::string &why);
	std::string Prefix() const { return "queue " + queue_.name + ": "; }

	const Config &config_;
	const QueueConfig &queue_;
	QueueCounters &counters_;
	StopSignal &stop_;
	std::unique_ptr<PgConnection> pg_;
	std::unique_ptr<AmqpConnection> broker_;
	Backoff pg_backoff_;
	Backoff broker_backoff_;
	ConfirmTracker tracker_;
	std::mt19937 random_;
	std::chrono::steady_clock::time_point metrics_at_{};
};

}  // namespace pgmq::relay
