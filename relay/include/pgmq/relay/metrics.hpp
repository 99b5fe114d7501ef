// relay/include/pgmq/relay/metrics.hpp
// What the relay counts, per queue: live atomics that the queue's worker
// updates, snapshots of them, and the two ways they are shown (Prometheus
// text for /metrics, one log line per report interval). Formatting is pure.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgmq::relay {

struct QueueSnapshot {
	std::string queue;  // the label: the queue's (a stream's) name
	// How the report line names it ("stream orders, group rabbitmq"); "" = "queue <queue>".
	std::string source;
	std::uint64_t read = 0;         // messages read from the queue
	std::uint64_t published = 0;    // basic.publish sent
	std::uint64_t confirmed = 0;    // basic.ack received (and not returned)
	std::uint64_t relayed = 0;      // confirmed and then deleted or archived
	std::uint64_t returned = 0;     // unroutable (basic.return): left in the queue
	std::uint64_t nacked = 0;       // basic.nack: left in the queue
	std::uint64_t unconfirmed = 0;  // no answer (timeout, lost connection): left in the queue
	std::uint64_t refused = 0;        // refused by the broker or the header rules
	std::uint64_t dead_lettered = 0;  // refused and moved to the dead-letter queue
	std::uint64_t timeouts = 0;       // batches whose publish or confirms outlasted the confirm timeout
	std::uint64_t postgres_connects = 0;
	std::uint64_t broker_connects = 0;
	std::int64_t confirms_pending = 0;  // published, not yet answered
	std::int64_t lag_seconds = -1;      // age of the oldest message in the queue; -1 unknown
	std::int64_t queue_length = -1;     // -1 unknown
	bool postgres_up = false;
	bool broker_up = false;
	bool broker_blocked = false;  // the broker said connection.blocked (an alarm)
};

class QueueCounters {
  public:
	explicit QueueCounters(std::string queue, std::string source = "")
		: queue_(std::move(queue)), source_(std::move(source))
	{
	}
	std::atomic<std::uint64_t> read{0}, published{0}, confirmed{0}, relayed{0}, returned{0}, nacked{0}, unconfirmed{0},
		refused{0}, dead_lettered{0}, timeouts{0}, postgres_connects{0}, broker_connects{0};
	std::atomic<std::int64_t> confirms_pending{0}, lag_seconds{-1}, queue_length{-1};
	std::atomic<bool> postgres_up{false}, broker_up{false}, broker_blocked{false};

	QueueSnapshot Snapshot() const;
	const std::string &queue() const { return queue_; }

  private:
	std::string queue_;
	std::string source_;
};

// "a\"b" for a label value: backslash, double quote and newline escaped, as
// the exposition format wants.
std::string EscapeLabelValue(std::string_view value);

// The Prometheus text exposition (version 0.0.4) of all queues.
std::string FormatPrometheus(const std::vector<QueueSnapshot> &queues);

// One log line: totals, what changed since previous, pending, lag.
std::string FormatReportLine(const QueueSnapshot &previous, const QueueSnapshot &current);

}  // namespace pgmq::relay
