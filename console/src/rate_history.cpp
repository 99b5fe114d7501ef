// console/src/rate_history.cpp
#include "pgmq/console/rate_history.hpp"

namespace pgmq::console {

void RateHistory::Record(double seconds, const std::vector<CounterSample> &samples)
{
	std::lock_guard<std::mutex> lock(mutex_);
	std::map<std::string, Series> next;
	for (const auto &sample : samples) {
		Series series;
		auto found = series_.find(sample.queue);
		if (found != series_.end() && found->second.relid == sample.relid && seconds > found->second.seconds &&
			sample.sent >= found->second.sent && sample.read >= found->second.read) {
			series = std::move(found->second);
			double elapsed = seconds - series.seconds;
			series.send_rates.push_back(static_cast<double>(sample.sent - series.sent) / elapsed);
			series.read_rates.push_back(static_cast<double>(sample.read - series.read) / elapsed);
			while (series.send_rates.size() > max_points_) {
				series.send_rates.pop_front();
				series.read_rates.pop_front();
			}
		}
		series.relid = sample.relid;
		series.seconds = seconds;
		series.sent = sample.sent;
		series.read = sample.read;
		next[sample.queue] = std::move(series);
	}
	series_ = std::move(next);
}

std::vector<double> RateHistory::SendRates(const std::string &queue) const
{
	std::lock_guard<std::mutex> lock(mutex_);
	auto found = series_.find(queue);
	if (found == series_.end())
		return {};
	return {found->second.send_rates.begin(), found->second.send_rates.end()};
}

std::vector<double> RateHistory::ReadRates(const std::string &queue) const
{
	std::lock_guard<std::mutex> lock(mutex_);
	auto found = series_.find(queue);
	if (found == series_.end())
		return {};
	return {found->second.read_rates.begin(), found->second.read_rates.end()};
}

}  // namespace pgmq::console
