// src/core/notify.cpp
// Insert-notification rules and SQL (see notify.hpp). May throw CoreError,
// std::bad_alloc.
#include "pgmq/core/notify.hpp"

#include <cstdint>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

void CheckThrottleInterval(int64_t interval_ms, bool say_value)
{
	if (interval_ms >= 0)
		return;
	std::string message = "throttle_interval_ms must be non-negative";
	if (say_value)
		message += ", got: " + std::to_string(interval_ms);
	throw CoreError(ErrorKind::InvalidParameter, message);
}

std::size_t WriteNotifyChannel(std::string_view queue_name, std::string_view operation, char *out,
                               std::size_t cap) noexcept
{
	static constexpr std::string_view kPrefix = "pgmq.q_";
	const std::size_t needed = kPrefix.size() + queue_name.size() + 1 + operation.size();
	if (needed + 1 > cap)
		return needed;
	char *end = out;
	end += kPrefix.copy(end, kPrefix.size());
	end += queue_name.copy(end, queue_name.size());
	*end++ = '.';
	end += operation.copy(end, operation.size());
	*end = '\0';
	return needed;
}

std::string DropNotifyTriggerSql(std::string_view queue_table)
{
	return std::string("DROP TRIGGER IF EXISTS ") + kNotifyTriggerName + " ON " + QualifiedTable(queue_table);
}

std::string CreateNotifyTriggerSql(std::string_view queue_table, std::string_view queue_name)
{
	// DEFERRABLE (initially immediate) constraint trigger, as upstream: it runs
	// at the end of the inserting statement, and can be deferred to commit.
	return std::string("CREATE CONSTRAINT TRIGGER ") + kNotifyTriggerName + " AFTER INSERT ON " +
	       QualifiedTable(queue_table) + " DEFERRABLE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners(" +
	       QuoteLiteral(queue_name) + ")";
}

std::string UpsertThrottleSql()
{
	return "INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms) VALUES ($1, $2) "
	       "ON CONFLICT ON CONSTRAINT notify_insert_throttle_queue_name_key DO UPDATE "
	       "SET throttle_interval_ms = EXCLUDED.throttle_interval_ms, last_notified_at = pg_catalog.to_timestamp(0)";
}

std::string DeleteThrottleSql()
{
	return "DELETE FROM pgmq.notify_insert_throttle WHERE queue_name OPERATOR(pg_catalog.=) $1";
}

std::string UpdateThrottleSql()
{
	return "UPDATE pgmq.notify_insert_throttle SET throttle_interval_ms = $2, "
	       "last_notified_at = pg_catalog.to_timestamp(0) WHERE queue_name OPERATOR(pg_catalog.=) $1";
}

std::string FindThrottleSql()
{
	return "SELECT 1 FROM pgmq.notify_insert_throttle WHERE queue_name OPERATOR(pg_catalog.=) $1";
}

bool NotifyDue(int32_t interval_ms, int64_t last_notified_us, int64_t now_us) noexcept
{
	if (interval_ms <= 0)
		return true;
	// A last notification after now (the clock was set back) is not due.
	if (now_us < last_notified_us)
		return false;
	// now >= last: the difference fits in uint64 whatever the values.
	const uint64_t elapsed_us = static_cast<uint64_t>(now_us) - static_cast<uint64_t>(last_notified_us);
	return elapsed_us >= static_cast<uint64_t>(interval_ms) * 1000;
}

std::string NotifyStateSql()
{
	return "SELECT t.throttle_interval_ms, t.last_notified_at FROM pgmq.notify_insert_throttle AS t "
	       "WHERE t.queue_name OPERATOR(pg_catalog.=) $1";
}

std::string NotifyThrottleSql()
{
	// Upstream UPDATEs the row and so waits for (and serialises behind) every
	// transaction that stamped it before. Here the stamp is taken only if the
	// row is free (SKIP LOCKED); the due test is repeated on the row as locked.
	return "WITH due AS (SELECT t.ctid FROM pgmq.notify_insert_throttle AS t "
	       "WHERE t.queue_name OPERATOR(pg_catalog.=) $1 AND (t.throttle_interval_ms OPERATOR(pg_catalog.=) 0 "
	       "OR t.last_notified_at OPERATOR(pg_catalog.<=) ($2 OPERATOR(pg_catalog.-) "
	       "pg_catalog.make_interval(0, 0, 0, 0, 0, 0, t.throttle_interval_ms OPERATOR(pg_catalog./) 1000.0))) "
	       "FOR UPDATE OF t SKIP LOCKED) "
	       "UPDATE pgmq.notify_insert_throttle AS t SET last_notified_at = $2 FROM due "
	       "WHERE t.ctid OPERATOR(pg_catalog.=) due.ctid RETURNING t.throttle_interval_ms";
}

std::string QuoteLiteral(std::string_view text)
{
	const bool has_backslash = text.find('\\') != std::string_view::npos;
	std::string out;
	out.reserve(text.size() + 3);
	if (has_backslash)
		out.push_back('E');
	out.push_back('\'');
	for (char c : text) {
		if (c == '\'' || c == '\\')
			out.push_back(c);
		out.push_back(c);
	}
	out.push_back('\'');
	return out;
}

}  // namespace pgmq::core
