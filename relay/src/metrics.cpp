// relay/src/metrics.cpp
#include "pgmq/relay/metrics.hpp"

#include <sstream>

namespace pgmq::relay {

QueueSnapshot QueueCounters::Snapshot() const
{
	QueueSnapshot s;
	s.queue = queue_;
	s.source = source_;
	s.read = read.load();
	s.published = published.load();
	s.confirmed = confirmed.load();
	s.relayed = relayed.load();
	s.returned = returned.load();
	s.nacked = nacked.load();
	s.unconfirmed = unconfirmed.load();
	s.refused = refused.load();
	s.dead_lettered = dead_lettered.load();
	s.timeouts = timeouts.load();
	s.postgres_connects = postgres_connects.load();
	s.broker_connects = broker_connects.load();
	s.confirms_pending = confirms_pending.load();
	s.lag_seconds = lag_seconds.load();
	s.queue_length = queue_length.load();
	s.postgres_up = postgres_up.load();
	s.broker_up = broker_up.load();
	s.broker_blocked = broker_blocked.load();
	return s;
}

std::string EscapeLabelValue(std::string_view value)
{
	std::string out;
	for (char c : value) {
		if (c == '\\')
			out += "\\\\";
		else if (c == '"')
			out += "\\\"";
		else if (c == '\n')
			out += "\\n";
		else
			out += c;
	}
	return out;
}

namespace {

template <typename Field>
void Family(std::ostringstream &out, const std::vector<QueueSnapshot> &queues, const char *name, const char *type,
			const char *help, Field field)
{
	out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
	for (const auto &q : queues)
		out << name << "{queue=\"" << EscapeLabelValue(q.queue) << "\"} " << field(q) << '\n';
}

}  // namespace

std::string FormatPrometheus(const std::vector<QueueSnapshot> &queues)
{
	std::ostringstream out;
	using S = QueueSnapshot;
	Family(out, queues, "pgmq_relay_read_total", "counter", "Messages read from the pgmq queue.",
		   [](const S &q) { return q.read; });
	Family(out, queues, "pgmq_relay_published_total", "counter", "Messages published to the broker.",
		   [](const S &q) { return q.published; });
	Family(out, queues, "pgmq_relay_confirmed_total", "counter",
		   "Publishes the broker confirmed (basic.ack, not returned).", [](const S &q) { return q.confirmed; });
	Family(out, queues, "pgmq_relay_relayed_total", "counter",
		   "Messages confirmed and then deleted or archived from the queue.", [](const S &q) { return q.relayed; });
	Family(out, queues, "pgmq_relay_returned_total", "counter",
		   "Unroutable publishes (basic.return), left in the queue for a retry after the visibility timeout.",
		   [](const S &q) { return q.returned; });
	Family(out, queues, "pgmq_relay_nacked_total", "counter",
		   "Publishes the broker nacked (a broken channel): made visible again, published on a fresh channel.",
		   [](const S &q) { return q.nacked; });
	Family(out, queues, "pgmq_relay_unconfirmed_total", "counter",
		   "Publishes without an answer (timeout or lost connection), left in the queue.",
		   [](const S &q) { return q.unconfirmed; });
	Family(out, queues, "pgmq_relay_refused_total", "counter",
		   "Messages refused by the broker or by the relay's header rules.", [](const S &q) { return q.refused; });
	Family(out, queues, "pgmq_relay_dead_lettered_total", "counter",
		   "Refused messages moved to the dead-letter queue.", [](const S &q) { return q.dead_lettered; });
	Family(out, queues, "pgmq_relay_timeouts_total", "counter",
		   "Batches whose publishes or confirms outlasted the confirm timeout (e.g. a broker alarm).",
		   [](const S &q) { return q.timeouts; });
	Family(out, queues, "pgmq_relay_postgres_connects_total", "counter", "Successful PostgreSQL connections.",
		   [](const S &q) { return q.postgres_connects; });
	Family(out, queues, "pgmq_relay_broker_connects_total", "counter", "Successful broker connections.",
		   [](const S &q) { return q.broker_connects; });
	Family(out, queues, "pgmq_relay_confirms_pending", "gauge", "Publishes waiting for the broker's confirm.",
		   [](const S &q) { return q.confirms_pending; });
	Family(out, queues, "pgmq_relay_lag_seconds", "gauge",
		   "Age of the oldest message still in the queue (-1: not known yet).",
		   [](const S &q) { return q.lag_seconds; });
	Family(out, queues, "pgmq_relay_queue_length", "gauge", "Messages in the queue (-1: not known yet).",
		   [](const S &q) { return q.queue_length; });
	Family(out, queues, "pgmq_relay_postgres_up", "gauge", "1 while the queue's PostgreSQL connection is open.",
		   [](const S &q) { return q.postgres_up ? 1 : 0; });
	Family(out, queues, "pgmq_relay_broker_up", "gauge", "1 while the queue's broker connection is open.",
		   [](const S &q) { return q.broker_up ? 1 : 0; });
	Family(out, queues, "pgmq_relay_broker_blocked", "gauge",
		   "1 while the broker blocks the relay's publishes (connection.blocked: a memory or disk alarm).",
		   [](const S &q) { return q.broker_blocked ? 1 : 0; });
	return out.str();
}

std::string FormatReportLine(const QueueSnapshot &previous, const QueueSnapshot &current)
{
	std::ostringstream out;
	out << (current.source.empty() ? "queue " + current.queue : current.source) << ": relayed " << current.relayed
		<< " (+" << current.relayed - previous.relayed
		<< "), confirms pending " << current.confirms_pending << ", lag "
		<< (current.lag_seconds < 0 ? std::string("?") : std::to_string(current.lag_seconds) + " s") << ", length "
		<< (current.queue_length < 0 ? std::string("?") : std::to_string(current.queue_length));
	if (current.returned != previous.returned)
		out << ", returned +" << current.returned - previous.returned;
	if (current.nacked != previous.nacked)
		out << ", nacked +" << current.nacked - previous.nacked;
	if (current.unconfirmed != previous.unconfirmed)
		out << ", unconfirmed +" << current.unconfirmed - previous.unconfirmed;
	if (current.refused != previous.refused)
		out << ", refused +" << current.refused - previous.refused;
	if (current.timeouts != previous.timeouts)
		out << ", timeouts +" << current.timeouts - previous.timeouts;
	if (!current.postgres_up)
		out << ", postgres down";
	if (!current.broker_up)
		out << ", broker down";
	if (current.broker_blocked)
		out << ", broker blocked";
	return out.str();
}

}  // namespace pgmq::relay
