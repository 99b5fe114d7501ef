// relay/src/metrics_server.hpp
// A minimal HTTP/1.0 server for Prometheus: GET /metrics answers the text
// exposition, anything else 404. One connection at a time on its own thread;
// a scrape every few seconds needs nothing more.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "stop_signal.hpp"

namespace pgmq::relay {

class MetricsServer {
  public:
	using Render = std::function<std::string()>;
	// Binds host:port now (throws std::runtime_error if it cannot), serves
	// on a thread until Stop.
	MetricsServer(const std::string &host, int port, Render render);
	~MetricsServer() { Stop(); }
	MetricsServer(const MetricsServer &) = delete;
	MetricsServer &operator=(const MetricsServer &) = delete;
	void Stop();
	int port() const { return port_; }

  private:
	void Serve();
	void Answer(int client);

	int listen_fd_ = -1;
	int port_ = 0;
	Render render_;
	StopSignal stop_;
	std::thread thread_;
};

}  // namespace pgmq::relay
