// relay/src/config_sources.cpp
// The sources the relay reads, the items of "queues": a queue, given by its
// name or as an object with its exchange, routing and dead-letter settings,
// or a stream's consumer group: an object that names a "group".
#include "config_internal.hpp"
#include "config_json.hpp"

namespace pgmq::relay::config_detail {
namespace {

AfterConfirm ParseAfterConfirm(const std::string &text, const std::string &where)
{
	if (text == "delete")
		return AfterConfirm::Delete;
	if (text == "archive")
		return AfterConfirm::Archive;
	Fail(where, "must be \"delete\" or \"archive\"");
}

// A stream's consumer group: "group", and "subscribe" with its "since".
void ParseGroup(const nlohmann::json &item, const std::string &where, QueueConfig &source)
{
	ReadString(item, where, "group", source.group);
	if (item.contains("group") && (source.group.empty() || source.group.find('\0') != std::string::npos))
		Fail(Path(where, "group"), "must be a consumer group's name (not empty)");
	ReadBool(item, where, "subscribe", source.subscribe);
	ReadString(item, where, "since", source.since);
	if (source.group.empty() && (item.contains("subscribe") || item.contains("since")))
		Fail(Path(where, item.contains("subscribe") ? "subscribe" : "since"),
			 "only for a stream's consumer group (give \"group\")");
	if (item.contains("since") && (!source.subscribe || source.since.empty()))
		Fail(Path(where, "since"), source.since.empty() ? "must be a time or \"-infinity\""
													   : "only with \"subscribe\": true (it is pgmq.subscribe's since)");
	if (!source.group.empty() && item.contains("after_confirm"))
		Fail(Path(where, "after_confirm"),
			 "a consumer group acknowledges a confirmed message (pgmq.ack): the stream keeps it for its other groups");
}

}  // namespace

QueueConfig ParseSource(const nlohmann::json &item, const std::string &where)
{
	QueueConfig queue;
	if (item.is_string()) {  // "orders": default exchange, routing key = name
		queue.name = item.get<std::string>();
	} else if (item.is_object()) {
		CheckKeys(item, where,
				  {"name", "exchange", "routing_key", "after_confirm", "routing_key_header", "routing_keys",
				   "dead_letter_queue", "group", "subscribe", "since"});
		if (!item.contains("name"))
			Fail(where, "a queue needs a \"name\"");
		ReadString(item, where, "name", queue.name);
		ReadString(item, where, "exchange", queue.exchange);
		ReadString(item, where, "routing_key", queue.routing_key);
		std::string after = "delete";
		ReadString(item, where, "after_confirm", after);
		queue.after_confirm = ParseAfterConfirm(after, Path(where, "after_confirm"));
		ReadBool(item, where, "routing_key_header", queue.routing_key_header);
		ReadStringList(item, where, "routing_keys", queue.routing_keys);
		for (std::size_t i = 0; i < queue.routing_keys.size(); i++)
			if (queue.routing_keys[i].empty() || queue.routing_keys[i].size() > 255)
				Fail(Path(where, "routing_keys") + "[" + std::to_string(i) + "]", "must be 1 to 255 bytes");
		ReadString(item, where, "dead_letter_queue", queue.dead_letter_queue);
		if (item.contains("dead_letter_queue"))
			CheckQueueName(queue.dead_letter_queue, Path(where, "dead_letter_queue"));
		ParseGroup(item, where, queue);
	} else {
		Fail(where, "must be a queue name or an object");
	}
	CheckQueueName(queue.name, Path(where, "name"));
	if (queue.routing_key.empty())
		queue.routing_key = queue.name;
	CheckShortString(queue.exchange, Path(where, "exchange"));
	CheckShortString(queue.routing_key, Path(where, "routing_key"));
	return queue;
}

}  // namespace pgmq::relay::config_detail
