// relay/src/message.cpp
#include "pgmq/relay/message.hpp"

#include <nlohmann/json.hpp>

namespace pgmq::relay {
namespace {

// AMQP 0-9-1 field names are short strings of at most 128 characters.
constexpr std::size_t kMaxFieldName = 128;

bool IsRelayHeader(const std::string &name)
{
	return name == "x-pgmq-queue" || name == "x-pgmq-msg-id" || name == "x-pgmq-read-ct";
}

}  // namespace

std::string MessageId(std::string_view queue, std::int64_t msg_id)
{
	std::string id(queue);
	id += ':';
	id += std::to_string(msg_id);
	return id;
}

Outgoing PrepareMessage(const QueueConfig &queue, const QueueMessage &message)
{
	Outgoing out;
	out.message_id = MessageId(queue.name, message.msg_id);
	out.routing_key = queue.routing_key;
	out.headers.push_back({"x-pgmq-queue", queue.name});
	out.headers.push_back({"x-pgmq-msg-id", message.msg_id});
	out.headers.push_back({"x-pgmq-read-ct", static_cast<std::int64_t>(message.read_ct)});
	if (message.headers.empty())
		return out;

	nlohmann::json headers = nlohmann::json::parse(message.headers, nullptr, false);
	if (!headers.is_object()) {
		// pgmq stores any JSON value; only an object has names to forward.
		if (!headers.is_null())
			out.warning = "headers are not a JSON object; not forwarded";
		return out;
	}
	for (auto it = headers.begin(); it != headers.end(); ++it) {
		const std::string &name = it.key();
		const auto &value = it.value();
		if (name == kRoutingKeyHeader && queue.routing_key_header) {
			if (value.is_string() && !value.get<std::string>().empty() && value.get<std::string>().size() <= 255)
				out.routing_key = value.get<std::string>();
			else
				out.warning = "x-pgmq-routing-key must be a string of 1 to 255 bytes; the configured key is used";
		}
		if (IsRelayHeader(name) || name.empty() || name.size() > kMaxFieldName || value.is_null())
			continue;
		if (value.is_string())
			out.headers.push_back({name, value.get<std::string>()});
		else if (value.is_boolean())
			out.headers.push_back({name, value.get<bool>()});
		else if (value.is_number_integer() && !value.is_number_unsigned())
			out.headers.push_back({name, value.get<std::int64_t>()});
		else if (value.is_number_unsigned() && value.get<std::uint64_t>() <= INT64_MAX)
			out.headers.push_back({name, static_cast<std::int64_t>(value.get<std::uint64_t>())});
		else if (value.is_number())
			out.headers.push_back({name, value.get<double>()});
		else
			out.headers.push_back({name, value.dump()});
	}
	return out;
}

}  // namespace pgmq::relay
