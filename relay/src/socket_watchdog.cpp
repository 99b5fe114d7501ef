// relay/src/socket_watchdog.cpp
#include "socket_watchdog.hpp"

#include <sys/socket.h>

namespace pgmq::relay {

SocketWatchdog::SocketWatchdog() : thread_([this] { Run(); }) {}

SocketWatchdog::~SocketWatchdog()
{
	{
		std::lock_guard<std::mutex> lock(mutex_);
		quit_ = true;
	}
	wake_.notify_one();
	thread_.join();
}

void SocketWatchdog::Arm(int fd, Clock::time_point deadline)
{
	bool wake;
	{
		std::lock_guard<std::mutex> lock(mutex_);
		fd_ = fd;
		deadline_ = deadline;
		fired_ = false;
		// Deadlines only move later, batch after batch: a thread already
		// sleeping until an earlier one needs no wake-up (saves a context
		// switch per batch); it goes back to sleep until the new one.
		wake = deadline < sleeping_until_;
	}
	if (wake)
		wake_.notify_one();
}

bool SocketWatchdog::Disarm()
{
	std::lock_guard<std::mutex> lock(mutex_);
	fd_ = -1;
	return fired_;
}

void SocketWatchdog::Run()
{
	std::unique_lock<std::mutex> lock(mutex_);
	while (!quit_) {
		if (fd_ < 0) {
			sleeping_until_ = Clock::time_point::max();
			wake_.wait(lock);
			continue;
		}
		if (Clock::now() < deadline_) {
			sleeping_until_ = deadline_;
			wake_.wait_until(lock, deadline_);
			continue;
		}
		// Under the lock: Disarm cannot return (and the fd be closed and
		// reused) while this runs. Writing only: the blocked send fails at
		// once, and what the peer already sent can still be read.
		shutdown(fd_, SHUT_WR);
		fired_ = true;
		fd_ = -1;
	}
}

}  // namespace pgmq::relay
