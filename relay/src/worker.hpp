// relay/src/worker.hpp
// One source's relay loop, on a thread of its own with its own PostgreSQL and
// broker connections: read a batch (read_with_poll, vt covering publish and
// confirm), publish it, wait for the confirms, then delete or archive exactly
// the confirmed messages. Anything else stays in the queue and comes back,
// except a message refused for itself, which is set aside as a dead letter.
// A stream's consumer group goes the same way with read_stream_with_poll,
// and pgmq.ack for the delete; what it cannot release early (a stream has
// no set_vt) comes back when its lease runs out.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "amqp_client.hpp"
#include "pg_client.hpp"
#include "pgmq/relay/backoff.hpp"
#include "pgmq/relay/batch_budget.hpp"
#include "pgmq/relay/config.hpp"
#include "pgmq/relay/confirms.hpp"
#include "pgmq/relay/metrics.hpp"
#include "socket_watchdog.hpp"
#include "stop_signal.hpp"

namespace pgmq::relay {

// A configured queue that does not exist (or no pgmq in the database): no
// retry mends it, so the relay stops (exit status 2) with one line naming it.
class MissingQueue : public std::runtime_error {
  public:
	using std::runtime_error::runtime_error;
};

class Worker {
  public:
	Worker(const Config &config, const QueueConfig &queue, QueueCounters &counters, StopSignal &stop);

	// Returns after a stop request (the batch in flight finished first), or
	// in drain mode once a read found the queue empty. Throws MissingQueue.
	void Run();

  private:
	// What became of each message of a batch.
	enum class Fate { Pending, Confirmed, Returned, Nacked, Refused };
	struct Batch {
		const std::vector<QueueMessage> &messages;
		std::vector<Outgoing> outgoing;
		std::vector<Fate> fate;
		std::vector<std::string> refusal;  // why, for Refused
		std::chrono::steady_clock::time_point read_at;
	};

	bool EnsurePostgres();
	// Tries each broker address once, in turn; waits the backoff when none
	// answered and wait_on_failure.
	bool EnsureBroker(bool wait_on_failure);
	// The functions the relay calls are there (else MissingQueue); says once
	// which pgmq the database runs.
	void CheckDatabase();
	// Throws MissingQueue, or makes a missing dead-letter queue when configured.
	void CheckQueuesExist();
	// A stream's group is subscribed (subscribing it when configured), else MissingQueue.
	void CheckGroup();
	// Makes ids visible again at once (a queue's set_vt 0, a group's
	// release).
	void Release(const std::vector<std::int64_t> &ids);
	// After an empty read under --drain: whether nothing is left to relay (a
	// queue: yes; a group: nothing pending and nothing leased).
	bool Drained();
	void RelayBatch(const std::vector<QueueMessage> &messages);
	// Publishes the messages at indexes in one go; returns the failure, if any.
	std::optional<AmqpError> Publish(Batch &batch, const std::vector<std::size_t> &indexes);
	// After a channel closed on the batch: one message per publish, so that a
	// refused message is known and set aside. Returns a failure that is not
	// one message's (the rest of the batch then stays unanswered).
	std::optional<AmqpError> PublishOneByOne(Batch &batch);
	void Settle(Batch &batch, const std::optional<AmqpError> &failure);
	void SetAside(Batch &batch);
	void RefreshQueueMetrics(bool force);
	void DropPostgres(const std::string &why, bool lost);
	void DropBroker(const std::string &why);
	void Wait(Backoff &backoff, const std::string &what, const std::string &why);
	[[noreturn]] void Missing(const PgError &error);
	std::string Prefix() const { return DescribeSource(queue_) + ": "; }

	const Config &config_;
	const QueueConfig &queue_;
	const std::string &dead_letter_queue_;
	QueueCounters &counters_;
	StopSignal &stop_;
	SocketWatchdog watchdog_;
	std::unique_ptr<PgConnection> pg_;
	std::unique_ptr<AmqpConnection> broker_;
	std::size_t next_address_ = 0;
	Backoff pg_backoff_;
	Backoff broker_backoff_;
	ConfirmTracker tracker_;
	ReadSize read_size_;  // a stream's group: what the next read asks for
	std::mt19937 random_;
	std::chrono::steady_clock::time_point metrics_at_{};
};

}  // namespace pgmq::relay
