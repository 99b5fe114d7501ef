// relay/src/refusal.cpp
#include "pgmq/relay/refusal.hpp"

#include <nlohmann/json.hpp>

namespace pgmq::relay {
namespace {

constexpr int kAccessRefused = 403;
constexpr int kPreconditionFailed = 406;

}  // namespace

bool RefusedForItself(int reply_code, bool message_chose_routing_key)
{
	return reply_code == kPreconditionFailed || (reply_code == kAccessRefused && message_chose_routing_key);
}

bool MayBeOneMessage(int reply_code) { return reply_code == kPreconditionFailed || reply_code == kAccessRefused; }

std::string DeadLetterHeaders(const std::string &queue, const QueueMessage &message, const std::string &reason,
							  const std::string &group)
{
	nlohmann::json headers = nlohmann::json::object();
	if (!message.headers.empty()) {
		nlohmann::json own = nlohmann::json::parse(message.headers, nullptr, false);
		if (own.is_object())
			headers = std::move(own);
		else if (!own.is_discarded() && !own.is_null())
			headers["x-pgmq-relay-headers"] = std::move(own);
	}
	headers[kRefusedHeader] = reason;
	headers[kSourceHeader] = MessageId(queue, message.msg_id);
	if (!group.empty())
		headers[kGroupHeader] = group;
	else
		headers.erase(kGroupHeader);  // a queue's message sent again after a stream's refusal
	// Invalid UTF-8 in a broker's reason must not make the dump throw.
	return headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pgmq::relay
