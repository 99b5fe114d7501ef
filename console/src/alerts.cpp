// console/src/alerts.cpp
#include "pgmq/console/alerts.hpp"

namespace pgmq::console {

std::vector<std::string> FiringAlerts(const AlertFigures &f)
{
	std::vector<std::string> alerts;
	if (f.visible > 0 && f.oldest_msg_age_sec && *f.oldest_msg_age_sec > kOldestVisibleAlertSeconds && !f.paused &&
	    !f.dead_letter_queue && !f.stream)
		alerts.push_back("oldest_visible");
	if (f.dead_lettered && *f.dead_lettered > 0)
		alerts.push_back("dead_letters");
	if (f.default_partition_rows && *f.default_partition_rows > 0)
		alerts.push_back("default_partition");
	// By msg_id only once less runway is left than a maintenance run leaves,
	// so that a new queue's first batch does not fire it.
	if (f.runway_seconds && *f.runway_seconds < kRunwayAlertSeconds) {
		bool below_premade = true;
		if (f.partition_column == "msg_id")
			below_premade = f.runway_messages && f.premake && f.partition_interval &&
							*f.runway_messages < *f.premake * *f.partition_interval;
		if (below_premade)
			alerts.push_back("runway");
	}
	return alerts;
}

std::vector<std::string> FiringGroupAlerts(const StreamGroupFigures &f)
{
	std::vector<std::string> alerts;
	if (f.pending > 0 && f.idle_seconds && *f.idle_seconds > kGroupIdleAlertSeconds)
		alerts.push_back("stopped_reading");
	if (f.held_bytes && *f.held_bytes > kGroupHeldBytesAlert)
		alerts.push_back("holds_storage");
	return alerts;
}

}  // namespace pgmq::console
