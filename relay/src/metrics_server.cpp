// relay/src/metrics_server.cpp
#include "metrics_server.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "deadline_server.hpp"

namespace pgmq::relay {
namespace {

// A scrape's request is a few hundred bytes: it has this long to arrive.
constexpr std::chrono::seconds kRequestDeadline{2};
// And the client this long to take the answer.
constexpr std::chrono::seconds kSendTimeout{5};
// Clients served at once: scrapers, a curl by hand, and a few slow or idle
// connections, each of which gives its thread back within the deadline.
constexpr std::size_t kThreads = 8;

}  // namespace

class MetricsServer::Server : public http::DeadlineServer {
  public:
	Server() : DeadlineServer(kRequestDeadline, kSendTimeout) {}
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
	// httplib's stop does nothing before its loop has started.
	while (!server_->is_running() && !listen_returned_)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	server_->StopServing();
	thread_.join();
}

}  // namespace pgmq::relay
