// relay/src/metrics_server.cpp
#include "metrics_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace pgmq::relay {
namespace {

void SendAll(int fd, const std::string &data)
{
	std::size_t sent = 0;
	while (sent < data.size()) {
		ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
		if (n <= 0)
			return;  // the scraper went away
		sent += static_cast<std::size_t>(n);
	}
}

}  // namespace

MetricsServer::MetricsServer(const std::string &host, int port, Render render) : render_(std::move(render))
{
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	addrinfo *found = nullptr;
	std::string service = std::to_string(port);
	int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
	if (rc != 0)
		throw std::runtime_error("metrics_listen " + host + ": " + gai_strerror(rc));
	std::string error = "no address";
	for (addrinfo *a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
			listen_fd_ = fd;
			sockaddr_storage bound{};
			socklen_t len = sizeof bound;
			getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len);
			port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
													  : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
		} else {
			error = std::strerror(errno);
			close(fd);
		}
	}
	freeaddrinfo(found);
	if (listen_fd_ < 0)
		throw std::runtime_error("metrics_listen " + host + ":" + service + ": " + error);
	thread_ = std::thread([this] { Serve(); });
}

void MetricsServer::Stop()
{
	if (!thread_.joinable())
		return;
	stop_.Request();
	thread_.join();
	close(listen_fd_);
	listen_fd_ = -1;
}

void MetricsServer::Serve()
{
	while (!stop_.requested()) {
		pollfd p{listen_fd_, POLLIN, 0};
		if (poll(&p, 1, 200) <= 0)
			continue;
		int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (client < 0)
			continue;
		Answer(client);
		close(client);
	}
}

void MetricsServer::Answer(int client)
{
	// Read the request head (up to 8 kB, 2 s): only its first line matters.
	std::string request;
	char buffer[1024];
	while (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos &&
		   request.size() < 8192) {
		pollfd p{client, POLLIN, 0};
		if (poll(&p, 1, 2000) <= 0)
			return;
		ssize_t n = recv(client, buffer, sizeof buffer, 0);
		if (n <= 0)
			break;
		request.append(buffer, static_cast<std::size_t>(n));
	}
	std::string line = request.substr(0, request.find_first_of("\r\n"));
	std::string status = "404 Not Found", type = "text/plain; charset=utf-8", body = "not found; try /metrics\n";
	// "GET /metrics HTTP/1.1", also with a query string.
	std::string target = line.substr(0, line.find(' ', 4));
	if (target == "GET /metrics" || target.rfind("GET /metrics?", 0) == 0) {
		status = "200 OK";
		type = "text/plain; version=0.0.4; charset=utf-8";
		body = render_();
	} else if (line.rfind("GET ", 0) != 0) {
		status = "405 Method Not Allowed";
		body = "only GET\n";
	}
	SendAll(client, "HTTP/1.0 " + status + "\r\nContent-Type: " + type +
						"\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
}

}  // namespace pgmq::relay
