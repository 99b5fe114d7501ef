// relay/src/metrics_server.cpp
#include "metrics_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <httplib.h>

namespace pgmq::relay {
namespace {

using Clock = std::chrono::steady_clock;

// A scrape's request is a few hundred bytes: it has this long to arrive.
constexpr auto kRequestDeadline = std::chrono::seconds(2);
// And the client this long to take the answer.
constexpr auto kSendTimeout = std::chrono::seconds(5);
// Clients served at once: scrapers, a curl by hand, and a few slow or idle
// connections, each of which gives its thread back within the deadline.
constexpr std::size_t kThreads = 8;
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
	DeadlineStream(int fd, const std::atomic<bool> &stopping)
		: fd_(fd), read_deadline_(Clock::now() + kRequestDeadline), stopping_(stopping)
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
			write_deadline_ = Clock::now() + kSendTimeout;
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
	mutable Clock::time_point write_deadline_{};
	const std::atomic<bool> &stopping_;
	char buffer_[4096];
	std::size_t buffered_ = 0, filled_ = 0;
};

}  // namespace

class MetricsServer::Server : public httplib::Server {
  public:
	std::atomic<bool> stopping{false};

  private:
	// One request per connection, on our transport (see DeadlineStream).
	bool process_and_close_socket(socket_t sock) override
	{
		DeadlineStream stream(sock, stopping);
		bool closed = false;
		bool ok = process_request(stream, /*close_connection=*/true, closed, nullptr);
		shutdown(sock, SHUT_RDWR);
		close(sock);
		return ok;
	}
};

MetricsServer::MetricsServer(const std::string &host, int port, Render render) : server_(std::make_unique<Server>())
{
	server_->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
	server_->Get("/metrics", [render = std::move(render)](const httplib::Request &, httplib::Response &response) {
		response.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
	});
	server_->set_error_handler([](const httplib::Request &, httplib::Response &response) {
		if (response.status == 404)
			response.set_content("not found; try /metrics\n", "text/plain; charset=utf-8");
	});
	if (!server_->bind_to_port(host, port))
		throw std::runtime_error("metrics_listen " + host + ":" + std::to_string(port) +
								 ": cannot listen: " + std::strerror(errno));
	thread_ = std::thread([this] {
		server_->listen_after_bind();
		listen_returned_ = true;
	});
}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::Stop()
{
	if (!thread_.joinable())
		return;
	server_->stopping = true;
	// httplib's stop does nothing before its loop has started.
	while (!server_->is_running() && !listen_returned_)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	server_->stop();
	thread_.join();
}

}  // namespace pgmq::relay
