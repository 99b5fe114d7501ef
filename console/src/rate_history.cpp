// console/src/rate_history.cpp
#include "pgmq/console/rate_history.hpp"

namespace pgmq::console {
namespace {

double Average(const std::deque<double> &values, std::size_t from, std::size_t to)
{
	double sum = 0;
	for (std::size_t i = from; i < to; ++i)
		sum += values[i];
	return sum / static_cast<double>(to - from);
}

}  // namespace

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

std::vector<double> RateHistory::Downsample(const std::deque<double> &rates, std::size_t max_points)
{
	if (max_points == 0 || rates.size() <= max_points)
		return {rates.begin(), rates.end()};
	std::size_t per_bucket = (rates.size() + max_points - 1) / max_points;
	// Buckets end at the newest point, so the latest rate stays its own
	// bucket's last.
	std::vector<double> out;
	std::size_t first = rates.size() % per_bucket;
	if (first > 0)
		out.push_back(Average(rates, 0, first));
	for (std::size_t at = first; at < rates.size(); at += per_bucket)
		out.push_back(Average(rates, at, at + per_bucket));
	return out;
}

std::vector<double> RateHistory::SendRates(const std::string &queue, std::size_t max_points) const
{
	std::lock_guard<std::mutex> lock(mutex_);
	auto found = series_.find(queue);
	return found == series_.end() ? std::vector<double>{} : Downsample(found->second.send_rates, max_points);
}

std::vector<double> RateHistory::ReadRates(const std::string &queue, std::size_t max_points) const
{
	std::lock_guard<std::mutex> lock(mutex_);
	auto found = series_.find(queue);
	return found == series_.end() ? std::vector<double>{} : Downsample(found->second.read_rates, max_points);
}

}  // namespace pgmq::console
