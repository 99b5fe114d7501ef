// include/pgmq/core/moves.hpp
// Moving messages by id (docs/api.md): to another queue (move) and back
// from the archive (unarchive). Rare, operator-driven calls: their SQL runs
// once per call, not from a kept plan. Values are always parameters.
#pragma once

#include <string>
#include <string_view>

namespace pgmq::core {

// The header a moved message carries: {"queue": source, "msg_id": its id
// there}, plus "headers" when the message's headers were not an object.
constexpr const char *kMovedFromHeader = "x-pgmq-moved-from";

// move: ($1 msg_ids bigint[], $2 now, $3 source queue name) -> the new
// msg_id of every message of $1 found in pgmq.<from_table>, in the order of
// the old ids; the messages are deleted there and inserted into
// pgmq.<to_table>, visible at $2, with their message and headers (plus
// x-pgmq-moved-from). Waits for rows other transactions hold, as delete does.
std::string MoveSql(std::string_view from_table, std::string_view to_table);

// unarchive: ($1 msg_ids bigint[], $2 now) -> the msg_id of every message of
// $1 found in pgmq.<archive_table>, ascending; each is deleted there and
// inserted into pgmq.<queue_table> with its id, read_ct, enqueued_at,
// last_read_at, message and headers, visible at $2.
std::string UnarchiveSql(std::string_view queue_table, std::string_view archive_table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
