// console/include/pgmq/console/alerts.hpp
// The alert queries of docs/monitoring.md, evaluated on the figures the
// overview already has, so that a row is highlighted exactly when the query
// an operator's alerting runs would return it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pgmq::console {

struct AlertFigures {
	long long visible = 0;
	// The oldest message, visible or not (metrics' oldest_msg_age_sec), as
	// the alert query has it.
	std::optional<double> oldest_msg_age_sec;
	// A paused queue holds its messages on purpose, and a dead-letter queue's
	// wait for an operator: both are left out of "messages wait too long".
	bool paused = false;
	bool dead_letter_queue = false;
	// A stream keeps its messages for its consumer groups, which have
	// alerts of their own (FiringGroupAlerts): left out too.
	bool stream = false;
	std::optional<long long> dead_lettered;
	std::optional<long long> default_partition_rows;
	// Partitioned queues (pgmq.partition_status of the queue table).
	std::optional<double> runway_seconds;
	std::optional<long long> runway_messages;
	std::string partition_column;
	std::optional<long long> premake;
	std::optional<long long> partition_interval;  // for msg_id partitioning
};

// Thresholds as in docs/monitoring.md.
constexpr double kOldestVisibleAlertSeconds = 5 * 60;
constexpr double kRunwayAlertSeconds = 10 * 60;

// Names of the alerts that fire: "oldest_visible", "dead_letters",
// "default_partition", "runway".
std::vector<std::string> FiringAlerts(const AlertFigures &figures);

// A stream's consumer group (pgmq.stream_groups), as its two alert queries
// of docs/monitoring.md see it.
struct StreamGroupFigures {
	long long pending = 0;
	// Seconds since the group last read, or since it subscribed when it never
	// read (coalesce(last_read_at, subscribed_at)); nullopt: neither known.
	std::optional<double> idle_seconds;
	std::optional<long long> held_bytes;
};

// "A consumer group stopped reading": messages wait for it and it has not
// read for 10 minutes (as docs/streams.md has it). "A group holds too much
// storage": more than 10 GiB.
constexpr double kGroupIdleAlertSeconds = 10 * 60;
constexpr long long kGroupHeldBytesAlert = 10LL * 1024 * 1024 * 1024;

// "stopped_reading", "holds_storage".
std::vector<std::string> FiringGroupAlerts(const StreamGroupFigures &figures);

}  // namespace pgmq::console
