// relay/include/pgmq/relay/message.hpp
// From a pgmq row to what is published: the message-id consumers deduplicate
// on, the routing key, and the AMQP headers. Pure (nlohmann/json only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pgmq/relay/config.hpp"

namespace pgmq::relay {

// One row of pgmq.read_with_poll, as text.
struct QueueMessage {
	std::int64_t msg_id = 0;
	int read_ct = 0;
	std::int64_t enqueued_at_s = 0;  // Unix seconds, for the AMQP timestamp
	std::string body;                // message::text (JSON)
	std::string headers;             // headers::text, "" when NULL
};

using HeaderValue = std::variant<std::string, std::int64_t, double, bool>;

struct AmqpHeader {
	std::string name;
	HeaderValue value;
};

struct Outgoing {
	std::string message_id;
	std::string routing_key;
	bool chose_routing_key = false;  // the message's x-pgmq-routing-key was used
	std::vector<AmqpHeader> headers;
	std::string warning;  // set when a header was ignored (logged, message still sent)
	std::string refusal;  // set when the message must not be published: why
};

// The header a producer sets to choose the routing key of one message.
constexpr std::string_view kRoutingKeyHeader = "x-pgmq-routing-key";

// "<queue>:<msg_id>": stable across redeliveries, unique per database, so a
// consumer that remembers ids it applied drops every duplicate the relay can
// make (a message confirmed, then not deleted because the relay died).
std::string MessageId(std::string_view queue, std::int64_t msg_id);

// The message-id, routing key and headers for one message of queue. The
// producer's top-level headers are forwarded (objects and arrays as JSON
// text, nulls dropped), x- names included; x-pgmq-queue, x-pgmq-msg-id and
// x-pgmq-read-ct are the relay's own: a producer's header of such a name, in
// any case, is dropped. refusal is set (and nothing should be published) for
// a header RabbitMQ acts on (broker_headers.hpp), and for an
// x-pgmq-routing-key the queue does not allow: not enabled, not a string of
// 1 to 255 bytes, or not among the queue's routing_keys.
Outgoing PrepareMessage(const QueueConfig &queue, const QueueMessage &message);

}  // namespace pgmq::relay
