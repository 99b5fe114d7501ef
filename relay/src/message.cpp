// relay/src/message.cpp
#include "pgmq/relay/message.hpp"

#include "pgmq/relay/broker_headers.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace pgmq::relay {
namespace {

// AMQP 0-9-1 field names are short strings of at most 128 characters.
constexpr std::size_t kMaxFieldName = 128;

constexpr std::string_view kRelayHeaders[] = {"x-pgmq-queue", "x-pgmq-msg-id", "x-pgmq-read-ct"};

bool EqualsIgnoringCase(std::string_view a, std::string_view b)
{
	if (a.size() != b.size())
		return false;
	for (std::size_t i = 0; i < a.size(); i++)
		if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
			return false;
	return true;
}

// The relay's own headers are the relay's to set: a producer's header of the
// same name is dropped, in any case, so that a consumer that looks names up
// ignoring case cannot read the producer's value either.
bool IsRelayHeader(std::string_view name)
{
	for (std::string_view own : kRelayHeaders)
		if (EqualsIgnoringCase(name, own))
			return true;
	return false;
}

// Why the message's routing key header cannot be used; "" when it can.
std::string RoutingKeyRefusal(const QueueConfig &queue, const nlohmann::json &value)
{
	if (!queue.routing_key_header)
		return "x-pgmq-routing-key: this queue does not let a message choose its routing key";
	if (!value.is_string() || value.get<std::string>().empty() || value.get<std::string>().size() > 255)
		return "x-pgmq-routing-key must be a string of 1 to 255 bytes";
	const std::string &key = value.get_ref<const std::string &>();
	if (!queue.routing_keys.empty() &&
		std::find(queue.routing_keys.begin(), queue.routing_keys.end(), key) == queue.routing_keys.end())
		return "x-pgmq-routing-key \"" + key + "\" is not among the queue's routing_keys";
	return "";
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
		if (IsRelayHeader(name))
			continue;
		if (name == kRoutingKeyHeader) {
			out.refusal = RoutingKeyRefusal(queue, value);
			if (!out.refusal.empty())
				return out;
			out.routing_key = value.get<std::string>();
			out.chose_routing_key = true;
		} else if (std::string_view use = BrokerUseOfHeader(name); !use.empty()) {
			out.refusal = "header \"" + name + "\": " + std::string(use);
			return out;
		}
		if (name.empty() || name.size() > kMaxFieldName || value.is_null())
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
