// relay/src/metrics_server.hpp
// GET /metrics for Prometheus, served by cpp-httplib through
// common/http/deadline_server.hpp. The library bounds
// each read and write but not a whole request, so a client sending one byte
// a second could hold a thread for hours: every connection here gets one
// request, which must arrive within a deadline, and an answer, which the
// client must take within a send timeout. Several clients are served at
// once, and Stop returns at once even with clients connected.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace pgmq::relay {

class MetricsServer {
  public:
	using Render = std::function<std::string()>;
	// Binds host:port now (throws std::runtime_error if it cannot), serves
	// on a thread until Stop.
	MetricsServer(const std::string &host, int port, Render render);
	~MetricsServer();
	MetricsServer(const MetricsServer &) = delete;
	MetricsServer &operator=(const MetricsServer &) = delete;
	void Stop();

  private:
	class Server;
	std::unique_ptr<Server> server_;
	std::atomic<bool> listen_returned_{false};
	std::thread thread_;
};

}  // namespace pgmq::relay
