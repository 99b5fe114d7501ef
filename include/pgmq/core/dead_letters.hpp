// include/pgmq/core/dead_letters.hpp
// Dead letters and why messages failed (docs/delivery.md): the headers a
// dead-lettered message carries, the failure history that retry and
// dead_letter record, and redrive back to the queue each message came from.
// Values are always parameters; table names are quoted by the core.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pgmq::core {

// The header holding a message's last failures: a JSON array of at most
// kMaxFailures objects {"reason", "at", "read_ct"}, oldest first.
constexpr const char *kFailuresHeader = "x-pgmq-failures";
constexpr int kMaxFailures = 5;
// A reason is kept to its first kMaxReasonLength characters.
constexpr int kMaxReasonLength = 1000;
// The reason a read gives a message it moves at the delivery limit.
constexpr const char *kDeliveryLimitReason = "max_deliveries reached";

// SQL expression: `headers` (an expression of type jsonb) with one failure
// appended to its x-pgmq-failures, the oldest dropped beyond kMaxFailures.
// `reason` (text; NULL: the headers unchanged), `at` (timestamptz) and
// `read_ct` (integer) are expressions. Headers that are not a JSON object
// (a string, an array) are left as they are; NULL headers become an object.
std::string FailureAppendedSql(const std::string &headers, const std::string &reason, const std::string &at,
                               const std::string &read_ct);

// SQL expression: the headers of a message moved to a dead-letter queue,
// from the columns of row alias `m` (msg_id, read_ct, enqueued_at,
// headers): its headers plus x-pgmq-dead-letter {queue: `queue`, msg_id,
// read_ct, enqueued_at, moved_at: `moved_at`, reason: `reason`}; headers
// that are not an object are kept in x-pgmq-dead-letter.headers instead.
std::string DeadLetterHeadersSql(const std::string &queue, const std::string &moved_at, const std::string &reason);

// dead_letter: ($1 msg_ids, $2 now, $3 queue name as in meta, $4 reason or
// NULL) -> the msg_id of each message moved from pgmq.<queue_table> to
// pgmq.<dead_letter_table>, visible at once, in msg_id order; a reason is
// also appended to its failure history.
std::string DeadLetterNowSql(std::string_view queue_table, std::string_view dead_letter_table);

// redrive: ($1 qty or NULL for all, $2 now, $3 the queue's name as in meta)
// -> the number of rows moved from pgmq.<dead_letter_table> into
// pgmq.<queue_table>: only those dead-lettered from that queue (their
// x-pgmq-dead-letter.queue), in their original order (the msg_id they had
// there), visible at once, with the headers they had before (their failure
// history kept). Skips rows other transactions hold.
std::string RedriveSql(std::string_view dead_letter_table, std::string_view queue_table);

// redrive_all: () -> the name of each queue that messages in
// pgmq.<dead_letter_table> were dead-lettered from, with how many, by name.
std::string DeadLetterSourcesSql(std::string_view dead_letter_table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
