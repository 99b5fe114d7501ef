// include/pgmq/core/fifo.hpp
// FIFO message groups: messages that share a group key (header
// x-pgmq-group; missing or JSON null -> "_default_fifo_group") are delivered
// in msg_id order, and never while an earlier message of the group is in
// flight. Wording: a group's *head* is its lowest msg_id, visible or not; a
// group is *open* when its head is visible; its *run* is its visible messages
// from the head up to (not including) its first invisible one.
// docs/fifo.md explains the statements and the index that serves them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pgmq::core {

// The three group-read strategies of upstream pgmq.
enum class GroupRead {
	Batch,       // read_grouped: fill from the oldest open group first (SQS FIFO)
	RoundRobin,  // read_grouped_rr: layer by layer across the oldest groups
	Head,        // read_grouped_head: at most the head of each group
};

// The group key of alias.*, collated "C" (byte order: cheap to compare, and
// stable across libc upgrades). The index and the statements use this same
// expression, so the planner matches them.
std::string GroupKeyExpression(std::string_view alias);

// <queue_table>_fifo_idx into out (cap bytes with the NUL), upstream's index
// name. May throw CoreError(NameTooLong) when it is not an identifier.
void WriteGroupIndexName(std::string_view queue_table, char *out, std::size_t cap);

// CREATE INDEX IF NOT EXISTS of the group index: a btree on (group key,
// msg_id) of pgmq.<queue_table>. May throw.
std::string CreateGroupIndexSql(std::string_view queue_table);

// One group read on pgmq.<queue_table>: ($1 now, $2 new vt, $3 qty) ->
// message rows, in delivery order. with_group_index: the statement finds the
// group heads through the group index (one index probe per group) instead
// of reading the whole queue; use it only when that index exists.
// With a dead_letter_table, the claim of a queue with a dead-letter policy
// ($4 max deliveries, $5 queue name, see DeadLetterMoveSql): the kept rows
// delivered $4 times move there instead of being claimed, so a dead-lettered
// head stops holding its group back.
std::string GroupReadSql(GroupRead kind, bool with_group_index, std::string_view queue_table,
                         std::string_view dead_letter_table = {});

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
