// relay/include/pgmq/relay/refusal.hpp
// A message the broker (or the relay's header rules) refuses must cost that
// message only: it is set aside in a pgmq dead-letter queue with the reason,
// and the messages after it go on. Pure: no libpq, no rabbitmq-c.
#pragma once

#include <string>

#include "pgmq/relay/message.hpp"

namespace pgmq::relay {

// The broker closed the channel with reply_code right after one message was
// published alone on it. Is that message the cause (set it aside) or is the
// broker or the configuration at fault (back off and retry everything)?
// 406 PRECONDITION_FAILED (a body over max_message_size, a header the broker
// cannot take) is the message's; 403 ACCESS_REFUSED is only when the message
// chose its own routing key (topic permissions); 404 (no such exchange) and
// the rest would refuse every message alike.
bool RefusedForItself(int reply_code, bool message_chose_routing_key);

// Reply codes that may mean one message of a batch was refused: the batch is
// then published again one message at a time to find which.
bool MayBeOneMessage(int reply_code);

// Header names a dead letter gets (pgmq headers, JSON).
constexpr const char *kRefusedHeader = "x-pgmq-relay-refused";  // why
constexpr const char *kSourceHeader = "x-pgmq-relay-source";    // "<queue>:<msg_id>"
constexpr const char *kGroupHeader = "x-pgmq-relay-group";      // a stream's consumer group that read it

// The pgmq headers (JSON text) of message's dead letter: its own headers
// (kept under x-pgmq-relay-headers when they are not an object) plus why and
// where it came from: the queue (a stream), and the consumer group when the
// relay read a stream as one.
std::string DeadLetterHeaders(const std::string &queue, const QueueMessage &message, const std::string &reason,
							  const std::string &group = "");

}  // namespace pgmq::relay
