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

}  // namespace pgmq::console
