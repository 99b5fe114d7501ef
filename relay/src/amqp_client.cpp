// relay/src/amqp_client.cpp
#include "amqp_client.hpp"

#include <sys/time.h>

#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/ssl.h>

#include <vector>

namespace pgmq::relay {
namespace {

constexpr amqp_channel_t kChannel = 1;

timeval Millis(long ms)
{
	timeval tv;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

amqp_bytes_t Bytes(const std::string &text)
{
	amqp_bytes_t bytes;
	bytes.len = text.size();
	bytes.bytes = const_cast<char *>(text.data());
	return bytes;
}

std::string FromBytes(amqp_bytes_t bytes) { return std::string(static_cast<const char *>(bytes.bytes), bytes.len); }

// Why an RPC failed, in words.
std::string ReplyText(const amqp_rpc_reply_t &reply, const char *what)
{
	std::string prefix = std::string(what) + ": ";
	switch (reply.reply_type) {
	case AMQP_RESPONSE_NORMAL:
		return prefix + "ok";
	case AMQP_RESPONSE_NONE:
		return prefix + "missing RPC reply";
	case AMQP_RESPONSE_LIBRARY_EXCEPTION:
		return prefix + amqp_error_string2(reply.library_error);
	case AMQP_RESPONSE_SERVER_EXCEPTION:
		if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
			auto *close = static_cast<amqp_connection_close_t *>(reply.reply.decoded);
			return prefix + "broker closed the connection: " + FromBytes(close->reply_text);
		}
		if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
			auto *close = static_cast<amqp_channel_close_t *>(reply.reply.decoded);
			return prefix + "broker closed the channel: " + FromBytes(close->reply_text);
		}
		return prefix + "unexpected broker reply";
	}
	return prefix + "unknown reply";
}

amqp_table_entry_t BoolEntry(const char *key, bool value)
{
	amqp_table_entry_t entry{};
	entry.key = amqp_cstring_bytes(key);
	entry.value.kind = AMQP_FIELD_KIND_BOOLEAN;
	entry.value.value.boolean = value ? 1 : 0;
	return entry;
}

amqp_table_entry_t TextEntry(const char *key, const std::string &value)
{
	amqp_table_entry_t entry{};
	entry.key = amqp_cstring_bytes(key);
	entry.value.kind = AMQP_FIELD_KIND_UTF8;
	entry.value.value.bytes = Bytes(value);
	return entry;
}

// A TCP or TLS socket on conn; TLS verifies the broker's certificate chain
// and that it names the host, and offers TLS 1.2 or newer only.
amqp_socket_t *NewSocket(amqp_connection_state_t conn, const TlsConfig &tls, std::string &error)
{
	if (!tls.enabled)
		return amqp_tcp_socket_new(conn);
	amqp_socket_t *socket = amqp_ssl_socket_new(conn);
	if (socket == nullptr) {
		error = "cannot create a TLS socket";
		return nullptr;
	}
	amqp_ssl_socket_set_verify_peer(socket, 1);
	amqp_ssl_socket_set_verify_hostname(socket, 1);
	if (amqp_ssl_socket_set_ssl_versions(socket, AMQP_TLSv1_2, AMQP_TLSvLATEST) != AMQP_STATUS_OK) {
		error = "cannot require TLS 1.2 or newer";
		return nullptr;
	}
	int status = AMQP_STATUS_OK;
	if (tls.ca_file.empty()) {
		auto *context = static_cast<SSL_CTX *>(amqp_ssl_socket_get_context(socket));
		if (context == nullptr || SSL_CTX_set_default_verify_paths(context) != 1) {
			error = "cannot load the system's CA certificates";
			return nullptr;
		}
	} else if ((status = amqp_ssl_socket_set_cacert(socket, tls.ca_file.c_str())) != AMQP_STATUS_OK) {
		error = "rabbitmq.tls.ca_file " + tls.ca_file + ": " + amqp_error_string2(status);
		return nullptr;
	}
	if (!tls.cert_file.empty() &&
		(status = amqp_ssl_socket_set_key(socket, tls.cert_file.c_str(), tls.key_file.c_str())) != AMQP_STATUS_OK) {
		error = "rabbitmq.tls.cert_file/key_file: " + std::string(amqp_error_string2(status));
		return nullptr;
	}
	return socket;
}

}  // namespace

AmqpConnection::AmqpConnection(const BrokerConfig &broker, const BrokerAddress &address, const std::string &name,
							   SocketWatchdog &watchdog)
	: watchdog_(watchdog)
{
	conn_ = amqp_new_connection();
	if (conn_ == nullptr)
		throw AmqpError(AmqpError::Kind::Failed, "out of memory creating an AMQP connection");
	// From here on the destructor runs on failure (see Broken).
	try {
		std::string error = "cannot create a TCP socket";
		amqp_socket_t *socket = NewSocket(conn_, broker.tls, error);
		if (socket == nullptr)
			Broken(AmqpError::Kind::Failed, error);
		timeval connect_timeout = Millis(broker.connect_timeout_ms);
		int status = amqp_socket_open_noblock(socket, address.host.c_str(), address.port, &connect_timeout);
		if (status != AMQP_STATUS_OK)
			Broken(AmqpError::Kind::Failed, std::string(broker.tls.enabled ? "TLS connect" : "connect") + ": " +
												amqp_error_string2(status));
		// Login and the channel RPCs must not hang on a broker that accepts
		// and then says nothing.
		amqp_set_handshake_timeout(conn_, &connect_timeout);
		timeval rpc_timeout = Millis(broker.confirm_timeout_ms);
		amqp_set_rpc_timeout(conn_, &rpc_timeout);
		// connection.blocked: the broker says when an alarm stops publishers.
		amqp_table_entry_t capabilities[] = {BoolEntry("connection.blocked", true)};
		amqp_table_entry_t properties[2] = {TextEntry("connection_name", name), {}};
		properties[1].key = amqp_cstring_bytes("capabilities");
		properties[1].value.kind = AMQP_FIELD_KIND_TABLE;
		properties[1].value.value.table.num_entries = 1;
		properties[1].value.value.table.entries = capabilities;
		amqp_table_t client_properties{2, properties};
		amqp_rpc_reply_t reply =
			amqp_login_with_properties(conn_, broker.vhost.c_str(), 0, AMQP_DEFAULT_FRAME_SIZE, broker.heartbeat_s,
									   &client_properties, AMQP_SASL_METHOD_PLAIN, broker.user.c_str(),
									   broker.password.c_str());
		if (reply.reply_type != AMQP_RESPONSE_NORMAL)
			Broken(AmqpError::Kind::Failed, ReplyText(reply, "login"));
		amqp_channel_open(conn_, kChannel);
		reply = amqp_get_rpc_reply(conn_);
		if (reply.reply_type != AMQP_RESPONSE_NORMAL)
			Broken(AmqpError::Kind::Failed, ReplyText(reply, "channel.open"));
		amqp_confirm_select(conn_, kChannel);
		reply = amqp_get_rpc_reply(conn_);
		if (reply.reply_type != AMQP_RESPONSE_NORMAL)
			Broken(AmqpError::Kind::Failed, ReplyText(reply, "confirm.select"));
	} catch (...) {
		amqp_destroy_connection(conn_);
		conn_ = nullptr;
		throw;
	}
}

AmqpConnection::~AmqpConnection()
{
	if (conn_ == nullptr)
		return;
	// A graceful close only on a healthy connection: on a broken one it
	// would wait for an answer that does not come.
	if (!broken_)
		amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn_);
}

void AmqpConnection::Broken(AmqpError::Kind kind, const std::string &message, int reply_code)
{
	broken_ = true;
	throw AmqpError(kind, message, reply_code);
}

void AmqpConnection::PublishAndConfirm(const std::string &exchange, const std::vector<Publication> &batch,
									   ConfirmTracker &tracker, std::chrono::steady_clock::time_point deadline)
{
	tracker.Start(next_tag_);
	WatchdogArmed armed(watchdog_, amqp_get_sockfd(conn_), deadline);
	try {
		for (const Publication &publication : batch) {
			Publish(exchange, publication);
			tracker.Published(publication.out->message_id);
		}
		WaitConfirms(tracker, deadline);
	} catch (const AmqpError &e) {
		// A socket the watchdog shut down fails as a socket error: say what
		// it was. A publish that never completed was not confirmed either.
		if (armed.Disarm() && e.kind() == AmqpError::Kind::Failed) {
			ReadNotifications();
			Broken(AmqpError::Kind::Timeout, "publish blocked until the confirm timeout" +
												 std::string(blocked_ ? " (broker blocked: " + blocked_reason_ + ")"
																	  : " (the broker stopped reading)"));
		}
		throw;
	}
}

void AmqpConnection::Publish(const std::string &exchange, const Publication &publication)
{
	const Outgoing &out = *publication.out;
	const QueueMessage &message = *publication.message;
	std::vector<amqp_table_entry_t> entries(out.headers.size());
	for (std::size_t i = 0; i < out.headers.size(); i++) {
		const AmqpHeader &header = out.headers[i];
		amqp_table_entry_t &entry = entries[i];
		entry.key = Bytes(header.name);
		if (auto *text = std::get_if<std::string>(&header.value)) {
			entry.value.kind = AMQP_FIELD_KIND_UTF8;
			entry.value.value.bytes = Bytes(*text);
		} else if (auto *number = std::get_if<std::int64_t>(&header.value)) {
			entry.value.kind = AMQP_FIELD_KIND_I64;
			entry.value.value.i64 = *number;
		} else if (auto *real = std::get_if<double>(&header.value)) {
			entry.value.kind = AMQP_FIELD_KIND_F64;
			entry.value.value.f64 = *real;
		} else {
			entry.value.kind = AMQP_FIELD_KIND_BOOLEAN;
			entry.value.value.boolean = std::get<bool>(header.value) ? 1 : 0;
		}
	}
	static const std::string content_type = "application/json";
	amqp_basic_properties_t props{};
	props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
				   AMQP_BASIC_TIMESTAMP_FLAG | AMQP_BASIC_HEADERS_FLAG;
	props.content_type = Bytes(content_type);
	props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
	props.message_id = Bytes(out.message_id);
	props.timestamp = static_cast<std::uint64_t>(message.enqueued_at_s);
	props.headers.num_entries = static_cast<int>(entries.size());
	props.headers.entries = entries.data();
	int status = amqp_basic_publish(conn_, kChannel, Bytes(exchange), Bytes(out.routing_key), /*mandatory=*/1,
									/*immediate=*/0, &props, Bytes(message.body));
	if (status != AMQP_STATUS_OK)
		Broken(AmqpError::Kind::Failed, std::string("publish: ") + amqp_error_string2(status));
	next_tag_++;
}

bool AmqpConnection::NextFrame(amqp_frame_t &frame, long timeout_ms)
{
	timeval tv = Millis(timeout_ms < 0 ? 0 : timeout_ms);
	int status = amqp_simple_wait_frame_noblock(conn_, &frame, &tv);
	if (status == AMQP_STATUS_TIMEOUT)
		return false;
	if (status != AMQP_STATUS_OK)
		Broken(AmqpError::Kind::Failed, std::string("broker connection: ") + amqp_error_string2(status));
	return true;
}

void AmqpConnection::HandleFrame(const amqp_frame_t &frame, ConfirmTracker *tracker)
{
	if (frame.frame_type != AMQP_FRAME_METHOD)
		return;  // content of something we did not ask for: ignore
	switch (frame.payload.method.id) {
	case AMQP_BASIC_ACK_METHOD: {
		auto *ack = static_cast<amqp_basic_ack_t *>(frame.payload.method.decoded);
		if (tracker)
			tracker->Ack(ack->delivery_tag, ack->multiple);
		break;
	}
	case AMQP_BASIC_NACK_METHOD: {
		auto *nack = static_cast<amqp_basic_nack_t *>(frame.payload.method.decoded);
		if (tracker)
			tracker->Nack(nack->delivery_tag, nack->multiple);
		break;
	}
	case AMQP_BASIC_RETURN_METHOD: {
		// The returned message follows as a header and body; its
		// message-id says which of ours it was.
		amqp_message_t returned;
		amqp_rpc_reply_t reply = amqp_read_message(conn_, frame.channel, &returned, 0);
		if (reply.reply_type != AMQP_RESPONSE_NORMAL)
			Broken(AmqpError::Kind::Failed, ReplyText(reply, "reading a returned message"));
		if (tracker && (returned.properties._flags & AMQP_BASIC_MESSAGE_ID_FLAG))
			tracker->Returned(FromBytes(returned.properties.message_id));
		amqp_destroy_message(&returned);
		break;
	}
	case AMQP_CHANNEL_CLOSE_METHOD: {
		auto *close = static_cast<amqp_channel_close_t *>(frame.payload.method.decoded);
		Broken(AmqpError::Kind::ChannelClosed, "broker closed the channel: " + FromBytes(close->reply_text),
			   close->reply_code);
	}
	case AMQP_CONNECTION_CLOSE_METHOD: {
		auto *close = static_cast<amqp_connection_close_t *>(frame.payload.method.decoded);
		Broken(AmqpError::Kind::ConnectionClosed, "broker closed the connection: " + FromBytes(close->reply_text),
			   close->reply_code);
	}
	case AMQP_CONNECTION_BLOCKED_METHOD: {
		auto *blocked = static_cast<amqp_connection_blocked_t *>(frame.payload.method.decoded);
		blocked_ = true;
		blocked_reason_ = FromBytes(blocked->reason);
		break;
	}
	case AMQP_CONNECTION_UNBLOCKED_METHOD:
		blocked_ = false;
		break;
	default:
		break;
	}
}

void AmqpConnection::WaitConfirms(ConfirmTracker &tracker, std::chrono::steady_clock::time_point deadline)
{
	while (!tracker.Done()) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			Broken(AmqpError::Kind::Timeout,
				   "no confirm within the confirm timeout (" + std::to_string(tracker.pending()) + " pending" +
					   (blocked_ ? "; broker blocked: " + blocked_reason_ : "") + ")");
		amqp_frame_t frame;
		if (!NextFrame(frame, static_cast<long>(left.count())))
			continue;  // the deadline check above ends it
		HandleFrame(frame, &tracker);
	}
	amqp_maybe_release_buffers(conn_);
}

void AmqpConnection::ReadNotifications()
{
	// A broker that blocks a connection says so (connection.blocked) and
	// then stops reading: the notice is waiting in the socket.
	try {
		amqp_frame_t frame;
		for (int i = 0; i < 64 && NextFrame(frame, 0); i++)
			HandleFrame(frame, nullptr);
	} catch (const AmqpError &) {
		// the connection is going anyway
	}
}

void AmqpConnection::Pump()
{
	amqp_frame_t frame;
	while (NextFrame(frame, 0))
		HandleFrame(frame, nullptr);
	amqp_maybe_release_buffers(conn_);
}

}  // namespace pgmq::relay
