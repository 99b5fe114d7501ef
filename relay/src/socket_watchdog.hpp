// relay/src/socket_watchdog.hpp
// Bounds a wait that a library cannot bound itself: rabbitmq-c's publish
// waits for the socket to take its bytes without a time limit, and a broker
// under a memory or disk alarm stops reading. At the deadline the watchdog
// shuts the socket down, so the blocked call fails at once and the caller
// drops the connection (after reading what the broker still had to say,
// such as connection.blocked). One thread per worker, armed around each batch.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace pgmq::relay {

class SocketWatchdog {
  public:
	using Clock = std::chrono::steady_clock;

	SocketWatchdog();
	~SocketWatchdog();
	SocketWatchdog(const SocketWatchdog &) = delete;
	SocketWatchdog &operator=(const SocketWatchdog &) = delete;

	// Until Disarm: shutdown(fd, SHUT_WR) at deadline.
	void Arm(int fd, Clock::time_point deadline);
	// Returns whether the deadline passed and the socket was shut down. The
	// fd is never touched after Disarm returns, so it may then be closed.
	bool Disarm();

  private:
	void Run();

	std::mutex mutex_;
	std::condition_variable wake_;
	int fd_ = -1;
	Clock::time_point deadline_{};
	Clock::time_point sleeping_until_ = Clock::time_point::max();
	bool fired_ = false;
	bool quit_ = false;
	std::thread thread_;
};

// Arms a watchdog for a scope.
class WatchdogArmed {
  public:
	WatchdogArmed(SocketWatchdog &watchdog, int fd, SocketWatchdog::Clock::time_point deadline) : watchdog_(watchdog)
	{
		watchdog_.Arm(fd, deadline);
	}
	~WatchdogArmed() { watchdog_.Disarm(); }
	WatchdogArmed(const WatchdogArmed &) = delete;
	WatchdogArmed &operator=(const WatchdogArmed &) = delete;
	bool Disarm() { return watchdog_.Disarm(); }

  private:
	SocketWatchdog &watchdog_;
};

}  // namespace pgmq::relay
