// console/src/database.cpp
#include "database.hpp"

#include <chrono>

#include "connection_settings.hpp"

namespace pgmq::console {
namespace {

constexpr auto kAcquireWait = std::chrono::seconds(5);

std::string Trimmed(const char *message)
{
	std::string text = message ? message : "";
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.pop_back();
	return text;
}

}  // namespace

Session::Session(const std::string &conninfo, const std::string &password, bool read_only)
{
	// The password after dbname: the file's wins.
	const char *keys[] = {"dbname", "fallback_application_name", "connect_timeout", "password", nullptr};
	const char *values[] = {conninfo.empty() ? nullptr : conninfo.c_str(), "pgmq-console", "5",
							password.empty() ? nullptr : password.c_str(), nullptr};
	conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
	if (PQstatus(conn_) != CONNECTION_OK)
		throw DatabaseError("cannot connect: " + pg::WithHint(Trimmed(PQerrorMessage(conn_)), "--password-file"), "",
							true);
	// A schema on search_path could otherwise resolve count, now or an
	// operator to a function of whoever may create there.
	Exec("SET search_path = pg_catalog");
	Exec("SET statement_timeout = '15s'");
	Exec("SET lock_timeout = '5s'");
	// The catalog statement calls pgmq's set-returning functions once per
	// queue; their row estimates (1,000 each) put its cost far above
	// jit_above_cost, and compiling it took 0.8 s for a statement that runs
	// in 15 ms.
	Exec("SET jit = off");
	if (read_only)
		Exec("SET default_transaction_read_only = on");
}

std::vector<Row> Session::Exec(const std::string &sql, const std::vector<Value> &params)
{
	std::vector<const char *> values;
	for (const auto &param : params)
		values.push_back(param ? param->c_str() : nullptr);
	PGresult *result = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
									nullptr, nullptr, 0);
	std::unique_ptr<PGresult, decltype(&PQclear)> owned(result, PQclear);
	ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
	if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
		const char *sqlstate = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
		const char *primary = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
		bool lost = PQstatus(conn_) != CONNECTION_OK;
		throw DatabaseError(primary ? primary : Trimmed(PQerrorMessage(conn_)), sqlstate ? sqlstate : "", lost);
	}
	std::vector<Row> rows(static_cast<std::size_t>(PQntuples(result)));
	int columns = PQnfields(result);
	for (std::size_t r = 0; r < rows.size(); ++r)
		for (int c = 0; c < columns; ++c) {
			int row = static_cast<int>(r);
			if (PQgetisnull(result, row, c))
				rows[r].emplace_back(std::nullopt);
			else
				rows[r].emplace_back(std::string(PQgetvalue(result, row, c), PQgetlength(result, row, c)));
		}
	return rows;
}

Transaction::~Transaction()
{
	if (!open_)
		return;
	try {
		session_.Exec("ROLLBACK");
	} catch (const DatabaseError &) {
		// A broken connection: the pool drops the session.
	}
}

void Transaction::Commit()
{
	open_ = false;
	session_.Exec("COMMIT");
}

Pool::Lease Pool::Acquire()
{
	std::unique_lock<std::mutex> lock(mutex_);
	if (!returned_.wait_for(lock, kAcquireWait, [this] { return !idle_.empty() || open_ < size_; }))
		throw DatabaseError("every database session is busy; try again", "", false);
	if (!idle_.empty()) {
		auto session = std::move(idle_.back());
		idle_.pop_back();
		return Lease(*this, std::move(session));
	}
	++open_;
	lock.unlock();
	try {
		return Lease(*this, std::make_unique<Session>(conninfo_, password_, read_only_));
	} catch (...) {
		std::lock_guard<std::mutex> relock(mutex_);
		--open_;
		returned_.notify_one();
		throw;
	}
}

void Pool::Return(std::unique_ptr<Session> session)
{
	std::lock_guard<std::mutex> lock(mutex_);
	if (session && session->healthy())
		idle_.push_back(std::move(session));
	else
		--open_;
	returned_.notify_one();
}

}  // namespace pgmq::console
