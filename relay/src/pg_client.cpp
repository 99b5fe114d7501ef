// relay/src/pg_client.cpp
#include "pg_client.hpp"

#include <cstdlib>

namespace pgmq::relay {
namespace {

// The statements, with every argument typed so that each call resolves to
// exactly the pgmq overload meant here.
constexpr const char *kRead =
	"SELECT msg_id, read_ct, extract(epoch FROM enqueued_at)::bigint, message::text, headers::text "
	"FROM pgmq.read_with_poll($1::text, $2::integer, $3::integer, $4::integer, $5::integer)";
constexpr const char *kDelete = "SELECT count(*) FROM pgmq.delete($1::text, $2::bigint[])";
constexpr const char *kArchive = "SELECT count(*) FROM pgmq.archive($1::text, $2::bigint[])";
constexpr const char *kRelease = "SELECT count(*) FROM pgmq.set_vt($1::text, $2::bigint[], 0)";
constexpr const char *kMetrics = "SELECT queue_length, coalesce(oldest_msg_age_sec, 0) FROM pgmq.metrics($1::text)";

std::string ArrayLiteral(const std::vector<std::int64_t> &ids)
{
	std::string text = "{";
	for (std::size_t i = 0; i < ids.size(); i++) {
		if (i)
			text += ',';
		text += std::to_string(ids[i]);
	}
	return text + "}";
}

std::string Trimmed(const char *message)
{
	std::string text = message ? message : "";
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.pop_back();
	return text;
}

}  // namespace

PgConnection::PgConnection(const std::string &conninfo)
{
	// TCP keepalives that notice a dead server within about a minute instead
	// of the kernel's two hours (a read can wait long on a silent peer). They
	// come before dbname, so the connection string can override them.
	const char *keywords[] = {"keepalives_idle", "keepalives_interval",       "keepalives_count",
							  "dbname",          "fallback_application_name", nullptr};
	const char *values[] = {"30", "10", "3", conninfo.c_str(), "pgmq-relay", nullptr};
	conn_ = PQconnectdbParams(keywords, values, 1);
	if (conn_ == nullptr)
		throw PgError("out of memory creating a libpq connection");
	if (PQstatus(conn_) != CONNECTION_OK) {
		std::string message = Trimmed(PQerrorMessage(conn_));
		PQfinish(conn_);
		conn_ = nullptr;
		throw PgError(message);
	}
}

PgResult PgConnection::Exec(const char *sql, const std::vector<std::string> &params)
{
	std::vector<const char *> values;
	for (const auto &p : params)
		values.push_back(p.c_str());
	PgResult result(
		PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
	ExecStatusType status = PQresultStatus(result.get());
	if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
		throw PgError(Trimmed(PQerrorMessage(conn_)), PQstatus(conn_) != CONNECTION_OK);
	return result;
}

std::vector<QueueMessage> PgConnection::ReadWithPoll(const std::string &queue, int vt_s, int qty, int poll_s,
													 int poll_interval_ms)
{
	PgResult result = Exec(kRead, {queue, std::to_string(vt_s), std::to_string(qty), std::to_string(poll_s),
								   std::to_string(poll_interval_ms)});
	PGresult *r = result.get();
	std::vector<QueueMessage> messages(PQntuples(r));
	for (int i = 0; i < PQntuples(r); i++) {
		QueueMessage &m = messages[i];
		m.msg_id = std::strtoll(PQgetvalue(r, i, 0), nullptr, 10);
		m.read_ct = std::atoi(PQgetvalue(r, i, 1));
		m.enqueued_at_s = std::strtoll(PQgetvalue(r, i, 2), nullptr, 10);
		m.body.assign(PQgetvalue(r, i, 3), PQgetlength(r, i, 3));
		if (!PQgetisnull(r, i, 4))
			m.headers.assign(PQgetvalue(r, i, 4), PQgetlength(r, i, 4));
	}
	return messages;
}

std::int64_t PgConnection::Remove(const std::string &queue, const std::vector<std::int64_t> &ids, bool archive)
{
	PgResult result = Exec(archive ? kArchive : kDelete, {queue, ArrayLiteral(ids)});
	return std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
}

void PgConnection::Release(const std::string &queue, const std::vector<std::int64_t> &ids)
{
	Exec(kRelease, {queue, ArrayLiteral(ids)});
}

void PgConnection::Metrics(const std::string &queue, std::int64_t &length, std::int64_t &oldest_age_s)
{
	PgResult result = Exec(kMetrics, {queue});
	length = std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
	oldest_age_s = std::strtoll(PQgetvalue(result.get(), 0, 1), nullptr, 10);
}

}  // namespace pgmq::relay
