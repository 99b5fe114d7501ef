// console/include/pgmq/console/rate_history.hpp
// Send and read rates per queue over the last hour, from counters the
// sampler reads every few seconds (rows inserted into and updated in the
// queue's tables, by PostgreSQL's statistics). A rate is the counter's
// increase over the time between two samples. A counter that went down
// (statistics reset, the queue dropped and made again: another relid)
// starts the queue's history over. Safe from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pgmq::console {

struct CounterSample {
	std::string queue;
	std::uint32_t relid = 0;
	std::int64_t sent = 0;
	std::int64_t read = 0;
};

class RateHistory {
  public:
	explicit RateHistory(std::size_t max_points) : max_points_(max_points) {}
	// One sample of every queue at seconds (monotonic); queues missing from
	// it are forgotten.
	void Record(double seconds, const std::vector<CounterSample> &samples);
	// Per second, oldest first: one per interval between samples, or, when
	// there are more than max_points, the average of as many consecutive
	// intervals as it takes to fit (the newest bucket may hold fewer).
	std::vector<double> SendRates(const std::string &queue, std::size_t max_points) const;
	std::vector<double> ReadRates(const std::string &queue, std::size_t max_points) const;

  private:
	static std::vector<double> Downsample(const std::deque<double> &rates, std::size_t max_points);
	struct Series {
		std::uint32_t relid = 0;
		double seconds = 0;
		std::int64_t sent = 0, read = 0;
		std::deque<double> send_rates, read_rates;
	};
	std::size_t max_points_;
	mutable std::mutex mutex_;
	std::map<std::string, Series> series_;
};

}  // namespace pgmq::console
