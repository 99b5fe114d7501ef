// console/src/sampler.hpp
// Reads every queue's counters every --sample-seconds on a session of its
// own and records them in the RateHistory, whether or not a page is open,
// so that the sparklines cover the last hour from the console's start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "pgmq/console/rate_history.hpp"

namespace pgmq::console {

class Sampler {
  public:
	Sampler(std::string conninfo, std::string password, int sample_seconds, RateHistory &history);
	~Sampler();
	Sampler(const Sampler &) = delete;
	Sampler &operator=(const Sampler &) = delete;

  private:
	void Run();
	std::string conninfo_;
	std::string password_;
	int sample_seconds_;
	RateHistory &history_;
	std::mutex mutex_;
	std::condition_variable wake_;
	bool stopping_ = false;
	std::thread thread_;
};

}  // namespace pgmq::console
