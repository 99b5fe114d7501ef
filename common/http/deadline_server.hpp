// common/http/deadline_server.hpp
// An httplib::Server for programs that face clients they do not trust (the
// relay's /metrics, pgmq-console). httplib bounds each read and write but not
// a whole request, so a client sending one byte a second could hold a thread
// for hours: here every connection gets one request, which must arrive whole
// within a deadline, and its answer, which the client must take within a
// send timeout. Stop() cuts every wait short.
#pragma once

#include <atomic>
#include <chrono>

#include <httplib.h>

namespace pgmq::http {

class DeadlineServer : public httplib::Server {
  public:
	DeadlineServer(std::chrono::milliseconds request_deadline, std::chrono::milliseconds send_timeout);
	// Ends listen() and every connection's waits.
	void StopServing();

  private:
	bool process_and_close_socket(socket_t sock) override;

	const std::chrono::milliseconds request_deadline_;
	const std::chrono::milliseconds send_timeout_;
	std::atomic<bool> stopping_{false};
};

}  // namespace pgmq::http
