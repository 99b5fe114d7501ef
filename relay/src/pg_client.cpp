// relay/src/pg_client.cpp
#include "pg_client.hpp"

#include <cstdlib>
#include <optional>

#include "connection_settings.hpp"
#include "log.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/relay/batch_budget.hpp"
#include "pgmq/relay/one_line.hpp"

namespace pgmq::relay {
namespace {

// The statements, with every argument typed so that each call resolves to
// exactly the pgmq overload meant here.
constexpr const char *kReadWithPoll =
	"SELECT msg_id, read_ct, extract(epoch FROM enqueued_at)::bigint, message::text, headers::text "
	"FROM pgmq.read_with_poll($1::text, $2::integer, $3::integer, $4::integer, $5::integer) ORDER BY msg_id";
// The first three of the same parameters.
constexpr const char *kReadOnce =
	"SELECT msg_id, read_ct, extract(epoch FROM enqueued_at)::bigint, message::text, headers::text "
	"FROM pgmq.read($1::text, $2::integer, $3::integer) ORDER BY msg_id";
// A stream's consumer group (docs/streams.md): the rows in the order the
// group's batch holds them (transaction, then msg_id), which is the order
// they are published in.
constexpr const char *kReadStreamWithPoll =
	"SELECT msg_id, read_ct, extract(epoch FROM enqueued_at)::bigint, message::text, headers::text "
	"FROM pgmq.read_stream_with_poll($1::text, $2::text, $3::integer, $4::integer, $5::integer, $6::integer) "
	"WITH ORDINALITY AS m ORDER BY m.ordinality";
constexpr const char *kReadStreamOnce =
	"SELECT msg_id, read_ct, extract(epoch FROM enqueued_at)::bigint, message::text, headers::text "
	"FROM pgmq.read_stream($1::text, $2::text, $3::integer, $4::integer) WITH ORDINALITY AS m ORDER BY m.ordinality";
constexpr const char *kAck = "SELECT count(*) FROM pgmq.ack($1::text, $2::text, $3::bigint[])";
constexpr const char *kAckOne = "SELECT pgmq.ack($1::text, $2::text, $3::bigint)";
constexpr const char *kGroupExists =
	"SELECT EXISTS (SELECT FROM pgmq.stream_groups($1::text) AS g WHERE g.group_name = $2::text)";
constexpr const char *kSubscribe = "SELECT pgmq.subscribe($1::text, $2::text)";
constexpr const char *kSubscribeSince = "SELECT pgmq.subscribe($1::text, $2::text, $3::timestamptz)";
// Not yet read (pending) and leased (in_flight): what the group has yet to
// acknowledge, as a queue's length counts its invisible messages too.
constexpr const char *kGroupMetrics =
	"SELECT coalesce(g.pending, 0) + coalesce(g.in_flight, 0), "
	"coalesce(extract(epoch FROM clock_timestamp() - g.oldest_pending_at), 0)::bigint "
	"FROM pgmq.stream_groups($1::text) AS g WHERE g.group_name = $2::text";
constexpr const char *kCreate = "SELECT pgmq.create($1::text)";
constexpr const char *kDelete = "SELECT count(*) FROM pgmq.delete($1::text, $2::bigint[])";
constexpr const char *kArchive = "SELECT count(*) FROM pgmq.archive($1::text, $2::bigint[])";
constexpr const char *kRelease = "SELECT count(*) FROM pgmq.set_vt($1::text, $2::bigint[], 0)";
constexpr const char *kReleaseToGroup =
	"SELECT count(*) FROM unnest($3::bigint[]) AS i (id) WHERE pgmq.release($1::text, $2::text, i.id)";
constexpr const char *kDeleteOne = "SELECT pgmq.delete($1::text, $2::bigint)";
constexpr const char *kSendWithHeaders = "SELECT pgmq.send($1::text, $2::jsonb, $3::jsonb)";
// to_regclass needs no privilege on the table, unlike pgmq.metrics.
constexpr const char *kQueueExists = "SELECT to_regclass(format('pgmq.%I', $1::text)) IS NOT NULL";
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

std::string Trimmed(const char *message) { return OneLine(message ? message : ""); }

}  // namespace

PgConnection::PgConnection(const std::string &conninfo, const std::string &password, std::string log_prefix)
	: log_prefix_(std::move(log_prefix))
{
	// TCP keepalives that notice a dead server within about a minute instead
	// of the kernel's two hours (a read can wait long on a silent peer). They
	// come before dbname, so the connection string can override them; the
	// password comes after it, so the file's wins.
	const char *keywords[] = {"keepalives_idle", "keepalives_interval",       "keepalives_count", "dbname",
							  "fallback_application_name", "password", nullptr};
	const char *values[] = {"30", "10", "3", conninfo.c_str(), "pgmq-relay",
							password.empty() ? nullptr : password.c_str(), nullptr};
	conn_ = PQconnectdbParams(keywords, values, 1);
	if (conn_ == nullptr)
		throw PgError("out of memory creating a libpq connection");
	if (PQstatus(conn_) != CONNECTION_OK) {
		std::string message =
			pg::WithHint(Trimmed(PQerrorMessage(conn_)), "postgres_password_file, PGMQ_RELAY_POSTGRES_PASSWORD_FILE");
		PQfinish(conn_);
		conn_ = nullptr;
		throw PgError(message);
	}
	// libpq's default prints to stderr as is: several lines, no timestamp.
	PQsetNoticeProcessor(conn_, &PgConnection::LogNotice, this);
}

void PgConnection::LogNotice(void *self, const char *message)
{
	LogWarning(static_cast<PgConnection *>(self)->log_prefix_ + "PostgreSQL says: " + Trimmed(message));
}

void PgConnection::Fail(const PGresult *result)
{
	const char *sqlstate = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
	const char *primary = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
	throw PgError(Trimmed(PQerrorMessage(conn_)), PQstatus(conn_) != CONNECTION_OK, sqlstate ? sqlstate : "",
				  primary ? Trimmed(primary) : "");
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
		Fail(result.get());
	return result;
}

ReadBatch PgConnection::ReadWithPoll(const std::string &queue, const std::string &group, int vt_s, int qty,
									 int poll_s, int poll_interval_ms, std::int64_t max_bytes)
{
	bool poll = poll_s > 0;
	std::vector<std::string> params = {queue};
	if (!group.empty())
		params.push_back(group);
	params.push_back(std::to_string(vt_s));
	params.push_back(std::to_string(qty));
	if (poll) {
		params.push_back(std::to_string(poll_s));
		params.push_back(std::to_string(poll_interval_ms));
	}
	std::vector<const char *> values;
	for (const auto &p : params)
		values.push_back(p.c_str());
	const char *sql = group.empty() ? (poll ? kReadWithPoll : kReadOnce) : (poll ? kReadStreamWithPoll : kReadStreamOnce);
	if (!PQsendQueryParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0) ||
		!PQsetSingleRowMode(conn_))
		Fail(nullptr);
	ReadBatch batch;
	BatchBudget budget(max_bytes);
	std::unique_ptr<PgResult> failed;
	// Every result is taken, also after a failure, so the connection is
	// ready for the next statement.
	while (PGresult *raw = PQgetResult(conn_)) {
		auto result = std::make_unique<PgResult>(raw);
		ExecStatusType status = PQresultStatus(raw);
		if (status == PGRES_TUPLES_OK)
			continue;  // the end of the rows
		if (status != PGRES_SINGLE_TUPLE) {
			if (!failed)
				failed = std::move(result);
			continue;
		}
		std::int64_t msg_id = std::strtoll(PQgetvalue(raw, 0, 0), nullptr, 10);
		if (!budget.Take(PQgetlength(raw, 0, 3) + PQgetlength(raw, 0, 4))) {
			batch.over_budget.push_back(msg_id);
			continue;
		}
		QueueMessage &m = batch.messages.emplace_back();
		m.msg_id = msg_id;
		m.read_ct = std::atoi(PQgetvalue(raw, 0, 1));
		m.enqueued_at_s = std::strtoll(PQgetvalue(raw, 0, 2), nullptr, 10);
		m.body.assign(PQgetvalue(raw, 0, 3), PQgetlength(raw, 0, 3));
		if (!PQgetisnull(raw, 0, 4))
			m.headers.assign(PQgetvalue(raw, 0, 4), PQgetlength(raw, 0, 4));
	}
	if (failed)
		Fail(failed->get());
	if (PQstatus(conn_) != CONNECTION_OK)
		Fail(nullptr);
	return batch;
}

bool PgConnection::MoveToDeadLetters(const std::string &queue, const std::string &group, std::int64_t msg_id,
									 const std::string &dead_letter_queue, const std::string &body,
									 const std::string &headers)
{
	// One transaction, the delete (a group's ack) first: only a message
	// still in its queue (still leased to the group) becomes a dead letter,
	// and never both or neither.
	Exec("BEGIN", {});
	try {
		PgResult deleted = group.empty() ? Exec(kDeleteOne, {queue, std::to_string(msg_id)})
										 : Exec(kAckOne, {queue, group, std::to_string(msg_id)});
		bool moved = PQgetvalue(deleted.get(), 0, 0)[0] == 't';
		if (moved)
			Exec(kSendWithHeaders, {dead_letter_queue, body, headers});
		Exec("COMMIT", {});
		return moved;
	} catch (const PgError &) {
		PQclear(PQexec(conn_, "ROLLBACK"));
		throw;
	}
}

bool PgConnection::QueueExists(const std::string &queue)
{
	PgResult result = Exec(kQueueExists, {core::TableName("q", queue)});
	return PQgetvalue(result.get(), 0, 0)[0] == 't';
}

void PgConnection::CreateQueue(const std::string &queue) { Exec(kCreate, {queue}); }

bool PgConnection::GroupExists(const std::string &stream, const std::string &group)
{
	PgResult result = Exec(kGroupExists, {stream, group});
	return PQgetvalue(result.get(), 0, 0)[0] == 't';
}

void PgConnection::Subscribe(const std::string &stream, const std::string &group, const std::string &since)
{
	if (since.empty())
		Exec(kSubscribe, {stream, group});
	else
		Exec(kSubscribeSince, {stream, group, since});
}

std::int64_t PgConnection::Acknowledge(const std::string &stream, const std::string &group,
									   const std::vector<std::int64_t> &ids)
{
	PgResult result = Exec(kAck, {stream, group, ArrayLiteral(ids)});
	return std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
}

void PgConnection::GroupMetrics(const std::string &stream, const std::string &group, std::int64_t &pending,
								std::int64_t &oldest_age_s)
{
	PgResult result = Exec(kGroupMetrics, {stream, group});
	if (PQntuples(result.get()) == 0)
		throw PgError("consumer group \"" + group + "\" of stream \"" + stream + "\" does not exist", false, "42704");
	pending = std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
	oldest_age_s = std::strtoll(PQgetvalue(result.get(), 0, 1), nullptr, 10);
}

pg::PgmqFeatures PgConnection::Features()
{
	PgResult result = Exec(pg::kFeaturesSql, {});
	auto text = [&](int column) -> std::optional<std::string> {
		if (PQgetisnull(result.get(), 0, column))
			return std::nullopt;
		return std::string(PQgetvalue(result.get(), 0, column));
	};
	auto flag = [&](int column) { return PQgetvalue(result.get(), 0, column)[0] == 't'; };
	return pg::ParseFeatures(text(0), text(1), flag(2), flag(3), flag(4));
}

std::int64_t PgConnection::Remove(const std::string &queue, const std::vector<std::int64_t> &ids, bool archive)
{
	PgResult result = Exec(archive ? kArchive : kDelete, {queue, ArrayLiteral(ids)});
	return std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
}

void PgConnection::Release(const std::string &queue, const std::string &group, const std::vector<std::int64_t> &ids)
{
	if (group.empty())
		Exec(kRelease, {queue, ArrayLiteral(ids)});
	else
		Exec(kReleaseToGroup, {queue, group, ArrayLiteral(ids)});
}

void PgConnection::Metrics(const std::string &queue, std::int64_t &length, std::int64_t &oldest_age_s)
{
	PgResult result = Exec(kMetrics, {queue});
	length = std::strtoll(PQgetvalue(result.get(), 0, 0), nullptr, 10);
	oldest_age_s = std::strtoll(PQgetvalue(result.get(), 0, 1), nullptr, 10);
}

}  // namespace pgmq::relay
