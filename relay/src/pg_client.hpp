// relay/src/pg_client.hpp
// libpq behind two RAII classes and the four statements the relay runs. Every
// failure throws PgError; the caller then drops the connection and reconnects
// (a statement that failed on a live connection is rare: a dropped queue, a
// missing privilege, and reconnecting with backoff is the right answer too).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include "pgmq/relay/message.hpp"

namespace pgmq::relay {

class PgError : public std::runtime_error {
  public:
	explicit PgError(const std::string &message, bool connection_lost = true)
		: std::runtime_error(message), connection_lost_(connection_lost)
	{
	}
	// False for a statement that failed on a connection that is still up
	// (a dropped queue, a missing privilege): the log says which.
	bool connection_lost() const { return connection_lost_; }

  private:
	bool connection_lost_;
};

class PgResult {
  public:
	explicit PgResult(PGresult *result) : result_(result) {}
	~PgResult() { PQclear(result_); }
	PgResult(const PgResult &) = delete;
	PgResult &operator=(const PgResult &) = delete;
	PgResult(PgResult &&other) noexcept : result_(other.result_) { other.result_ = nullptr; }
	PGresult *get() const { return result_; }

  private:
	PGresult *result_;
};

class PgConnection {
  public:
	// Connects; application_name defaults to "pgmq-relay" so that the
	// relay's sessions are easy to find in pg_stat_activity.
	explicit PgConnection(const std::string &conninfo);
	~PgConnection() { PQfinish(conn_); }
	PgConnection(const PgConnection &) = delete;
	PgConnection &operator=(const PgConnection &) = delete;

	// pgmq.read_with_poll(queue, vt, qty, poll_s, poll_interval_ms).
	std::vector<QueueMessage> ReadWithPoll(const std::string &queue, int vt_s, int qty, int poll_s,
										   int poll_interval_ms);
	// pgmq.delete or pgmq.archive of ids; returns how many were removed.
	std::int64_t Remove(const std::string &queue, const std::vector<std::int64_t> &ids, bool archive);
	// pgmq.set_vt(queue, ids, 0): makes messages we could not publish
	// visible again at once instead of after the visibility timeout.
	void Release(const std::string &queue, const std::vector<std::int64_t> &ids);
	// pgmq.metrics(queue): length and age of the oldest message.
	void Metrics(const std::string &queue, std::int64_t &length, std::int64_t &oldest_age_s);

	int backend_pid() const { return PQbackendPID(conn_); }

  private:
	PgResult Exec(const char *sql, const std::vector<std::string> &params);
	PGconn *conn_;
};

}  // namespace pgmq::relay
