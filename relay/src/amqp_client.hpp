// relay/src/amqp_client.hpp
// One broker connection with one channel in confirm mode (rabbitmq-c), over
// TCP or TLS. Every failure throws AmqpError and leaves the object broken:
// the caller drops it and reconnects; nothing unconfirmed is ever deleted.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <amqp.h>

#include "pgmq/relay/config.hpp"
#include "pgmq/relay/confirms.hpp"
#include "pgmq/relay/message.hpp"
#include "socket_watchdog.hpp"

namespace pgmq::relay {

class AmqpError : public std::runtime_error {
  public:
	enum class Kind {
		Failed,           // connect, login, socket: the connection is gone
		ChannelClosed,    // the broker closed the channel (reply_code says why)
		ConnectionClosed, // the broker closed the connection
		Timeout,          // no confirm (or a publish blocked) until the deadline
	};
	AmqpError(Kind kind, const std::string &message, int reply_code = 0)
		: std::runtime_error(message), kind_(kind), reply_code_(reply_code)
	{
	}
	Kind kind() const { return kind_; }
	int reply_code() const { return reply_code_; }

  private:
	Kind kind_;
	int reply_code_;
};

// One message to publish: what PrepareMessage made of a row, and the row.
struct Publication {
	const Outgoing *out;
	const QueueMessage *message;
};

class AmqpConnection {
  public:
	// Connects to address (TLS when broker.tls.enabled), logs in, opens
	// channel 1 and selects confirm mode. name shows in the broker's
	// connection list.
	AmqpConnection(const BrokerConfig &broker, const BrokerAddress &address, const std::string &name,
				   SocketWatchdog &watchdog);
	~AmqpConnection();
	AmqpConnection(const AmqpConnection &) = delete;
	AmqpConnection &operator=(const AmqpConnection &) = delete;

	// basic.publish of each (persistent, mandatory, with message-id, timestamp,
	// content type application/json and headers), then the acks, nacks and
	// returns into tracker until every publish is answered. Throws AmqpError
	// at the deadline, which also cuts a publish the broker does not read.
	void PublishAndConfirm(const std::string &exchange, const std::vector<Publication> &batch,
						   ConfirmTracker &tracker, std::chrono::steady_clock::time_point deadline);

	// Between batches: handles what the broker sent meanwhile and lets
	// rabbitmq-c send its heartbeat. Throws if the broker closed on us.
	void Pump();

	// Whether the broker said connection.blocked (and not yet unblocked),
	// and its reason ("low on memory").
	bool blocked() const { return blocked_; }
	const std::string &blocked_reason() const { return blocked_reason_; }

  private:
	void Publish(const std::string &exchange, const Publication &publication);
	void WaitConfirms(ConfirmTracker &tracker, std::chrono::steady_clock::time_point deadline);
	// One frame within timeout_ms; returns false on timeout.
	bool NextFrame(amqp_frame_t &frame, long timeout_ms);
	void HandleFrame(const amqp_frame_t &frame, ConfirmTracker *tracker);
	// What the broker sent and nobody read yet, without waiting.
	void ReadNotifications();
	[[noreturn]] void Broken(AmqpError::Kind kind, const std::string &message, int reply_code = 0);

	amqp_connection_state_t conn_ = nullptr;
	SocketWatchdog &watchdog_;
	std::uint64_t next_tag_ = 1;
	bool broken_ = false;
	bool blocked_ = false;
	std::string blocked_reason_;
};

}  // namespace pgmq::relay
