// relay/src/stop_signal.hpp
// The stop request every thread watches: set once by SIGTERM/SIGINT (or a
// fatal error); sleeps wake up at once when it is set.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace pgmq::relay {

class StopSignal {
  public:
	void Request()
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			stop_ = true;
		}
		cv_.notify_all();
	}
	bool requested() const { return stop_.load(); }
	// Sleeps ms unless a stop is requested; returns false if it was.
	bool SleepFor(int ms)
	{
		std::unique_lock<std::mutex> lock(mutex_);
		return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_.load(); });
	}

  private:
	std::mutex mutex_;
	std::condition_variable cv_;
	std::atomic<bool> stop_{false};
};

}  // namespace pgmq::relay
