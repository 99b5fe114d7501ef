// relay/src/pg_client.hpp
// libpq behind two RAII classes and the statements the relay runs. Every
// failure throws PgError; the caller then drops the connection and reconnects
// (a statement that failed on a live connection is rare: a missing
// privilege, and reconnecting with backoff is the right answer too), except
// for a queue that does not exist, which no retry will mend.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include "pgmq/relay/message.hpp"
#include "pgmq_features.hpp"

namespace pgmq::relay {

class PgError : public std::runtime_error {
  public:
	PgError(const std::string &message, bool connection_lost = true, std::string sqlstate = "",
			std::string primary = "")
		: std::runtime_error(message), connection_lost_(connection_lost), sqlstate_(std::move(sqlstate)),
		  primary_(std::move(primary))
	{
	}
	// The server's message alone, without "ERROR:" and its context; the
	// whole message when the error did not come from the server.
	std::string primary() const { return primary_.empty() ? what() : primary_; }
	// False for a statement that failed on a connection that is still up
	// (a dropped queue, a missing privilege): the log says which.
	bool connection_lost() const { return connection_lost_; }
	// undefined_table: pgmq's "queue does not exist" (and upstream pgmq's
	// missing q_ table); undefined_function/schema: no pgmq in the database;
	// undefined_object: a stream's group that is no longer subscribed.
	bool missing_queue() const
	{
		return sqlstate_ == "42P01" || sqlstate_ == "42883" || sqlstate_ == "3F000" || sqlstate_ == "42704";
	}

  private:
	bool connection_lost_;
	std::string sqlstate_;
	std::string primary_;
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

// One read: the messages that fit the byte limit, and the ids of those read
// beyond it (to be made visible again at once).
struct ReadBatch {
	std::vector<QueueMessage> messages;
	std::vector<std::int64_t> over_budget;
};

class PgConnection {
  public:
	// Connects; application_name defaults to "pgmq-relay" so that the
	// relay's sessions are easy to find in pg_stat_activity. What the server
	// says outside a statement's result (a notice, the FATAL of a terminated
	// session) goes to the log as one line, after log_prefix.
	// A password (from postgres_password_file) wins over libpq's
	// PGPASSWORD and PGPASSFILE. A failed connection's error names the
	// setting to fix (common/pg/connection_settings.hpp).
	PgConnection(const std::string &conninfo, const std::string &password, std::string log_prefix);
	~PgConnection() { PQfinish(conn_); }
	PgConnection(const PgConnection &) = delete;
	PgConnection &operator=(const PgConnection &) = delete;

	// What the database's pgmq offers (common/pg/pgmq_features.hpp).
	pg::PgmqFeatures Features();
	// pgmq.read_with_poll(queue, vt, qty, poll_s, poll_interval_ms), or
	// pgmq.read when poll_s is 0 (upstream's read_with_poll then returns
	// nothing without reading), in msg_id order (upstream leaves it open), taking
	// rows while their bodies and headers add up to at most max_bytes (the
	// first row always); the rows are received one at a time, so memory stays
	// within the limit plus one message.
	// With a group, queue is a stream read as that consumer group:
	// pgmq.read_stream_with_poll (pgmq.read_stream when poll_s is 0), in the
	// order the group's batch holds the messages.
	ReadBatch ReadWithPoll(const std::string &queue, const std::string &group, int vt_s, int qty, int poll_s,
						   int poll_interval_ms, std::int64_t max_bytes);
	// pgmq.delete or pgmq.archive of ids; returns how many were removed.
	std::int64_t Remove(const std::string &queue, const std::vector<std::int64_t> &ids, bool archive);
	// pgmq.set_vt(queue, ids, 0) (with a group: pgmq.release(stream, group,
	// id) of each): makes messages we could not publish visible again at
	// once instead of after the visibility timeout.
	void Release(const std::string &queue, const std::string &group, const std::vector<std::int64_t> &ids);
	// In one transaction: pgmq.delete of the message from queue (with a
	// group: pgmq.ack of it for the group) and, if it was still there
	// (leased), pgmq.send of its body with headers to dead_letter_queue.
	// Returns whether it moved.
	bool MoveToDeadLetters(const std::string &queue, const std::string &group, std::int64_t msg_id,
						   const std::string &dead_letter_queue, const std::string &body, const std::string &headers);
	// A stream's consumer group: whether it is subscribed (pgmq.stream_groups;
	// throws for a stream that does not exist), pgmq.subscribe (since "" =
	// NULL), pgmq.ack of ids (returns how many were acknowledged), and the
	// messages the group has yet to acknowledge (read or not) and the age of
	// the oldest it has not read.
	bool GroupExists(const std::string &stream, const std::string &group);
	void Subscribe(const std::string &stream, const std::string &group, const std::string &since);
	std::int64_t Acknowledge(const std::string &stream, const std::string &group, const std::vector<std::int64_t> &ids);
	void GroupMetrics(const std::string &stream, const std::string &group, std::int64_t &pending,
					  std::int64_t &oldest_age_s);
	// Whether pgmq has a queue of that name (needs no privilege on it).
	bool QueueExists(const std::string &queue);
	// pgmq.create(queue): upstream pgmq's function too.
	void CreateQueue(const std::string &queue);
	// pgmq.metrics(queue): length and age of the oldest message.
	void Metrics(const std::string &queue, std::int64_t &length, std::int64_t &oldest_age_s);

	int backend_pid() const { return PQbackendPID(conn_); }

  private:
	PgResult Exec(const char *sql, const std::vector<std::string> &params);
	[[noreturn]] void Fail(const PGresult *result);
	static void LogNotice(void *self, const char *message);
	PGconn *conn_;
	std::string log_prefix_;
};

}  // namespace pgmq::relay
