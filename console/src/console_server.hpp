// console/src/console_server.hpp
// The page and the JSON API over HTTP: the request guard before any route,
// security headers on every answer, and the one place where an error of any
// layer becomes an answer ({"error", "sqlstate"} with a status).
#pragma once

#include <memory>
#include <string>

#include "console_api.hpp"
#include "deadline_server.hpp"
#include "pgmq/console/request_guard.hpp"

namespace pgmq::console {

class ConsoleServer {
  public:
	ConsoleServer(ConsoleApi &api, const RequestGuard &guard);
	// Binds (false when it cannot), then serves until Stop.
	bool Bind(const std::string &host, int port);
	void Serve();
	void Stop();

  private:
	ConsoleApi &api_;
	const RequestGuard &guard_;
	http::DeadlineServer server_;
};

}  // namespace pgmq::console
