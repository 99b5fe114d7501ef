// console/include/pgmq/console/api_error.hpp
// What the JSON API answers when a request cannot be served: the HTTP status
// and a message, with PostgreSQL's SQLSTATE when the database refused.
#pragma once

#include <stdexcept>
#include <string>

namespace pgmq::console {

class ApiError : public std::runtime_error {
  public:
	ApiError(int status, const std::string &message, std::string sqlstate = "")
		: std::runtime_error(message), status_(status), sqlstate_(std::move(sqlstate))
	{
	}
	int status() const { return status_; }
	const std::string &sqlstate() const { return sqlstate_; }

  private:
	int status_;
	std::string sqlstate_;
};

// The status for an error the database raised: 403 for a missing privilege
// or a read-only session, 404 for a missing queue, 400 for bad input (a
// filter that is not JSON, a JSON path that does not parse), 409 for a lock
// or state conflict, 504 for a statement timeout, 503 when the connection
// is gone, else 500.
int HttpStatusForSqlstate(const std::string &sqlstate, bool connection_lost);

}  // namespace pgmq::console
