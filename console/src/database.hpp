// console/src/database.hpp
// libpq sessions of the connecting role, in a small pool shared by the HTTP
// threads. Each session runs with search_path pg_catalog, statement and lock
// timeouts (a stuck query answers an error instead of holding a thread),
// and, in read-only mode, default_transaction_read_only.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <libpq-fe.h>

namespace pgmq::console {

class DatabaseError : public std::runtime_error {
  public:
	DatabaseError(const std::string &message, std::string sqlstate, bool connection_lost)
		: std::runtime_error(message), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost)
	{
	}
	const std::string &sqlstate() const { return sqlstate_; }
	bool connection_lost() const { return connection_lost_; }

  private:
	std::string sqlstate_;
	bool connection_lost_;
};

using Value = std::optional<std::string>;  // nullopt: SQL NULL
using Row = std::vector<Value>;

class Session {
  public:
	// password: from --password-file ("" for none: libpq's PGPASSWORD or
	// PGPASSFILE apply). A failed connection's error names the setting to fix.
	Session(const std::string &conninfo, const std::string &password, bool read_only);
	~Session() { PQfinish(conn_); }
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;
	// Runs one statement with text parameters; throws DatabaseError.
	std::vector<Row> Exec(const std::string &sql, const std::vector<Value> &params = {});
	bool healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

  private:
	PGconn *conn_;
};

// A transaction on a session: BEGIN now, COMMIT by Commit(), ROLLBACK when
// left without (an exception). The locks a statement takes in it (the
// catalog's checks and LOCK TABLE) hold until its end.
class Transaction {
  public:
	explicit Transaction(Session &session) : session_(session) { session_.Exec("BEGIN"); }
	~Transaction();
	Transaction(const Transaction &) = delete;
	Transaction &operator=(const Transaction &) = delete;
	void Commit();

  private:
	Session &session_;
	bool open_ = true;
};

class Pool {
  public:
	Pool(std::string conninfo, std::string password, bool read_only, std::size_t size)
		: conninfo_(std::move(conninfo)), password_(std::move(password)), read_only_(read_only), size_(size)
	{
	}

	// A session for one request, returned to the pool when the lease ends
	// (dropped instead when its connection broke).
	class Lease {
	  public:
		Lease(Pool &pool, std::unique_ptr<Session> session) : pool_(pool), session_(std::move(session)) {}
		~Lease() { pool_.Return(std::move(session_)); }
		Lease(const Lease &) = delete;
		Lease &operator=(const Lease &) = delete;
		Session &operator*() const { return *session_; }
		Session *operator->() const { return session_.get(); }

	  private:
		Pool &pool_;
		std::unique_ptr<Session> session_;
	};
	// Waits up to a few seconds for a free session; throws DatabaseError.
	Lease Acquire();

  private:
	void Return(std::unique_ptr<Session> session);
	std::string conninfo_;
	std::string password_;
	bool read_only_;
	std::size_t size_;
	std::mutex mutex_;
	std::condition_variable returned_;
	std::vector<std::unique_ptr<Session>> idle_;
	std::size_t open_ = 0;
};

}  // namespace pgmq::console
