// relay/src/broker_headers.cpp
// Which headers RabbitMQ acts on when they come from a publisher, and where
// that is written down. The relay sends JSON objects and arrays as text
// (message.cpp), never as AMQP tables or arrays; that is why the headers the
// broker reads only as an array are not here:
//   x-death (dead-lettering history, https://www.rabbitmq.com/docs/dlx): a
//     text value is ignored, or replaced when the message is dead-lettered;
//   x-received-from (federation's hops): read only as an array.
// Headers that only an exchange or queue type the operator chose reads are
// the producer's to set, and not here either: x-delay (delayed-message
// plugin, x-delayed-message exchanges only), x-deduplication-header
// (message-deduplication plugin, its exchanges and queues only),
// x-stream-filter-value (stream filtering). x-match is a binding argument of
// headers exchanges, not a message header.
#include "pgmq/relay/broker_headers.hpp"

namespace pgmq::relay {
namespace {

struct BrokerHeader {
	std::string_view name;
	std::string_view use;
};

constexpr BrokerHeader kBrokerHeaders[] = {
	// Sender-selected distribution, https://www.rabbitmq.com/docs/sender-selected
	// (case-sensitive keys): the broker adds these routing keys to the
	// publish's, so a producer would reach queues the configuration does not
	// route to.
	{"CC", "RabbitMQ routes the message to its keys too (sender-selected distribution)"},
	{"BCC", "RabbitMQ routes the message to its keys too, then removes it (sender-selected distribution)"},
	// RabbitMQ 3.13 and later (message containers, deps/rabbit/src/mc_amqpl.erl):
	// when a message is converted to AMQP 1.0 (a stream, an AMQP 1.0
	// consumer) these are decoded as the message's encoded AMQP 1.0
	// sections, replacing what those consumers see, or failing the
	// conversion when they are not such an encoding.
	{"x-amqp-1.0-properties", "RabbitMQ takes it as the message's AMQP 1.0 properties"},
	{"x-amqp-1.0-app-properties", "RabbitMQ takes it as the message's AMQP 1.0 application properties"},
	{"x-amqp-1.0-message-annotations", "RabbitMQ takes it as the message's AMQP 1.0 message annotations"},
	{"x-amqp-1.0-footer", "RabbitMQ takes it as the message's AMQP 1.0 footer"},
	// The MQTT plugin shipped with RabbitMQ (https://www.rabbitmq.com/docs/mqtt;
	// 3.x rabbit_mqtt_processor) reads these when it delivers to an MQTT
	// subscriber; a value of another type than its own (a byte, a boolean)
	// fails the subscriber's connection on every delivery.
	{"x-mqtt-publish-qos", "RabbitMQ's MQTT plugin takes it as the QoS to deliver with"},
	{"x-mqtt-dup", "RabbitMQ's MQTT plugin takes it as the DUP flag of the delivery"},
};

}  // namespace

std::string_view BrokerUseOfHeader(std::string_view name)
{
	for (const BrokerHeader &header : kBrokerHeaders)
		if (header.name == name)
			return header.use;
	return {};
}

}  // namespace pgmq::relay
