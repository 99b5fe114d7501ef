// common/http/deadline_server.cpp
#include "deadline_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pgmq::http {
namespace {

using Clock = std::chrono::steady_clock;

// Waits are cut in slices this long, so that Stop is noticed at once.
constexpr int kSliceMs = 100;

void Address(int fd, bool peer, std::string &ip, int &port)
{
	sockaddr_storage address{};
	socklen_t length = sizeof address;
	int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr *>(&address), &length)
				  : getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
	if (rc != 0)
		return;
	char text[INET6_ADDRSTRLEN] = "";
	if (address.ss_family == AF_INET6) {
		auto *in6 = reinterpret_cast<sockaddr_in6 *>(&address);
		inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
		port = ntohs(in6->sin6_port);
	} else {
		auto *in = reinterpret_cast<sockaddr_in *>(&address);
		inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
		port = ntohs(in->sin_port);
	}
	ip = text;
}

// httplib's transport for one connection, with a deadline for the whole
// request and a send timeout, both cut short by a stop.
class DeadlineStream : public httplib::Stream {
  public:
	DeadlineStream(int fd, Clock::duration request_deadline, Clock::duration send_timeout,
				   const std::atomic<bool> &stopping)
		: fd_(fd), read_deadline_(Clock::now() + request_deadline), send_timeout_(send_timeout), stopping_(stopping)
	{
	}

	bool is_readable() const override { return buffered_ < filled_ || Ready(POLLIN, read_deadline_); }
	bool is_writable() const override { return Ready(POLLOUT, WriteDeadline()); }

	ssize_t read(char *ptr, size_t size) override
	{
		// httplib reads the request line and headers a byte at a time.
		if (buffered_ == filled_) {
			if (!Ready(POLLIN, read_deadline_))
				return -1;
			ssize_t n = recv(fd_, buffer_, sizeof buffer_, 0);
			if (n <= 0)
				return n;
			buffered_ = 0;
			filled_ = static_cast<std::size_t>(n);
		}
		std::size_t n = std::min(size, filled_ - buffered_);
		std::memcpy(ptr, buffer_ + buffered_, n);
		buffered_ += n;
		return static_cast<ssize_t>(n);
	}

	ssize_t write(const char *ptr, size_t size) override
	{
		if (!Ready(POLLOUT, WriteDeadline()))
			return -1;
		return send(fd_, ptr, size, MSG_NOSIGNAL);
	}

	void get_remote_ip_and_port(std::string &ip, int &port) const override { Address(fd_, true, ip, port); }
	void get_local_ip_and_port(std::string &ip, int &port) const override { Address(fd_, false, ip, port); }
	socket_t socket() const override { return fd_; }

  private:
	Clock::time_point WriteDeadline() const
	{
		if (write_deadline_ == Clock::time_point{})
			write_deadline_ = Clock::now() + send_timeout_;
		return write_deadline_;
	}

	bool Ready(short events, Clock::time_point deadline) const
	{
		while (!stopping_) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
			if (left <= 0)
				return false;
			pollfd p{fd_, events, 0};
			int rc = poll(&p, 1, static_cast<int>(std::min<long long>(left, kSliceMs)));
			if (rc > 0)
				return true;
			if (rc < 0 && errno != EINTR)
				return false;
		}
		return false;
	}

	int fd_;
	Clock::time_point read_deadline_;
	Clock::duration send_timeout_;
	mutable Clock::time_point write_deadline_{};
	const std::atomic<bool> &stopping_;
	char buffer_[4096];
	std::size_t buffered_ = 0, filled_ = 0;
};

}  // namespace

DeadlineServer::DeadlineServer(std::chrono::milliseconds request_deadline, std::chrono::milliseconds send_timeout)
	: request_deadline_(request_deadline), send_timeout_(send_timeout)
{
}

void DeadlineServer::StopServing()
{
	stopping_ = true;
	stop();
}

// One request per connection, on our transport (see DeadlineStream).
bool DeadlineServer::process_and_close_socket(socket_t sock)
{
	DeadlineStream stream(sock, request_deadline_, send_timeout_, stopping_);
	bool closed = false;
	bool ok = process_request(stream, /*close_connection=*/true, closed, nullptr);
	shutdown(sock, SHUT_RDWR);
	close(sock);
	return ok;
}

}  // namespace pgmq::http
