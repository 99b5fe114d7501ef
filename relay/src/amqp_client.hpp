// relay/src/amqp_client.hpp
// One broker connection with one channel in confirm mode (rabbitmq-c). Every
// failure throws AmqpError and leaves the object broken: the caller drops it
// and reconnects with backoff; nothing unconfirmed is ever deleted.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <amqp.h>

#include "pgmq/relay/config.hpp"
#include "pgmq/relay/confirms.hpp"
#include "pgmq/relay/message.hpp"

namespace pgmq::relay {

class AmqpError : public std::runtime_error {
  public:
	explicit AmqpError(const std::string &message) : std::runtime_error(message) {}
};

class AmqpConnection {
  public:
	// Connects, logs in, opens channel 1 and selects confirm mode.
	explicit AmqpConnection(const BrokerConfig &broker);
	~AmqpConnection();
	AmqpConnection(const AmqpConnection &) = delete;
	AmqpConnection &operator=(const AmqpConnection &) = delete;

	// The delivery tag the next Publish gets (tags count publishes on the
	// channel from 1 once it is in confirm mode).
	std::uint64_t next_tag() const { return next_tag_; }

	// basic.publish, persistent (delivery mode 2), mandatory, with the
	// message-id, the timestamp, content type application/json and headers.
	void Publish(const std::string &exchange, const Outgoing &out, const QueueMessage &message);

	// Reads acks, nacks and returns into tracker until every publish of the
	// batch is answered. Throws AmqpError at the deadline or on any failure.
	void WaitConfirms(ConfirmTracker &tracker, std::chrono::steady_clock::time_point deadline);

	// Between batches: handles what the broker sent meanwhile and lets
	// rabbitmq-c send its heartbeat. Throws if the broker closed on us.
	void Pump();

  private:
	// One frame within timeout_ms; returns false on timeout.
	bool NextFrame(amqp_frame_t &frame, long timeout_ms);
	void HandleFrame(const amqp_frame_t &frame, ConfirmTracker *tracker);
	[[noreturn]] void Broken(const std::string &message);

	amqp_connection_state_t conn_ = nullptr;
	std::uint64_t next_tag_ = 1;
	bool broken_ = false;
};

}  // namespace pgmq::relay
