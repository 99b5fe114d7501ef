// include/pgmq/pg/head_senders.hpp
// The sender slots' side of queue heads, for head_hint.cpp: what a
// transaction's end does with its slot, and what a refresh reads from the
// slots. BeginSend and the other announcements are in head_hint.hpp.
#pragma once

#include "pgmq/pg/head_table.hpp"

namespace pgmq::pg::head {

// At commit or prepare (committed: after the transaction's rows became
// visible, or were made durable) or abort: what this transaction sent
// reaches the refreshes under way, then its slot is freed, and no statement
// of its is running any more. Cannot fail.
void EndSends(bool committed);

// The bound the running senders put on key's head, or kUnknown when one of
// them cannot tell yet.
int64 SendersBound(uint64 key);

}  // namespace pgmq::pg::head
