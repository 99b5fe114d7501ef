// include/pgmq/core/notify.hpp
// Insert notifications: a queue with notifications enabled has a trigger on
// its table that NOTIFYs channel "pgmq.q_<queue name>.INSERT" (the name as
// created, so mixed case works: upstream 1.13.1), at most once per
// throttle_interval_ms (row in pgmq.notify_insert_throttle; 0 = every
// committed inserting transaction). docs/notify.md has the details.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pgmq::core {

// The trigger's name, as upstream's (clients and dumps may refer to it).
constexpr const char *kNotifyTriggerName = "trigger_notify_queue_insert_listeners";

// enable_notify_insert: interval >= 0 ("throttle_interval_ms must be
// non-negative"); update_notify_insert says ", got: N" too. May throw.
void CheckThrottleInterval(int64_t interval_ms, bool say_value);

// "pgmq.q_" + queue name + "." + operation into out when it fits (cap with
// the NUL); returns the length it needs.
std::size_t WriteNotifyChannel(std::string_view queue_name, std::string_view operation, char *out,
                               std::size_t cap) noexcept;

// DDL of the trigger on pgmq.<queue_table>; the trigger function gets the
// queue name as its argument. Identifiers quoted, the name a literal.
std::string DropNotifyTriggerSql(std::string_view queue_table);
std::string CreateNotifyTriggerSql(std::string_view queue_table, std::string_view queue_name);

// The throttle row of queue $1: insert or reset ($2 interval; last
// notification at the epoch), delete, reset the interval ($2), find.
std::string UpsertThrottleSql();
std::string DeleteThrottleSql();
std::string UpdateThrottleSql();
std::string FindThrottleSql();

// Whether an insert at now_us notifies, given the queue's throttle row
// (times in microseconds on any common scale): always with interval 0, else
// once the interval has passed since the last notification.
bool NotifyDue(int32_t interval_ms, int64_t last_notified_us, int64_t now_us) noexcept;

// Statement::NotifyState: ($1 queue name) -> the throttle row's
// (throttle_interval_ms, last_notified_at), no row when notifications are off.
// A plain read: most inserts stop here (not due yet).
std::string NotifyStateSql();

// Statement::NotifyThrottle: ($1 queue name, $2 now) -> one row when it
// stamped last_notified_at = now, because the row was due and free. Never
// waits on the throttle row: a transaction holding it is a concurrent sender
// that stamped it; whether this insert then notifies is decided at its
// commit (src/pg/notify_throttle.cpp).
std::string NotifyThrottleSql();

// 'text' as a SQL string literal (E'' form when it holds a backslash), for
// the one place a value must be literal: a trigger argument.
std::string QuoteLiteral(std::string_view text);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
