// relay/test/message_test.cpp
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "pgmq/relay/message.hpp"

using namespace pgmq::relay;

namespace {

QueueConfig Queue(bool header = true)
{
	QueueConfig q;
	q.name = "orders";
	q.exchange = "events";
	q.routing_key = "orders.created";
	q.routing_key_header = header;
	return q;
}

QueueMessage Message(std::string headers)
{
	QueueMessage m;
	m.msg_id = 42;
	m.read_ct = 3;
	m.body = R"({"amount": 100})";
	m.headers = std::move(headers);
	return m;
}

const HeaderValue *Find(const Outgoing &out, const std::string &name)
{
	for (const auto &h : out.headers)
		if (h.name == name)
			return &h.value;
	return nullptr;
}

}  // namespace

TEST(RelayMessage, MessageIdIsQueueAndMsgId)
{
	EXPECT_EQ(MessageId("orders", 42), "orders:42");
	EXPECT_EQ(MessageId("q", 9223372036854775807LL), "q:9223372036854775807");
}

TEST(RelayMessage, DefaultsWithoutHeaders)
{
	Outgoing out = PrepareMessage(Queue(), Message(""));
	EXPECT_EQ(out.message_id, "orders:42");
	EXPECT_EQ(out.routing_key, "orders.created");
	EXPECT_TRUE(out.warning.empty());
	ASSERT_NE(Find(out, "x-pgmq-msg-id"), nullptr);
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "x-pgmq-msg-id")), 42);
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "x-pgmq-read-ct")), 3);
	EXPECT_EQ(std::get<std::string>(*Find(out, "x-pgmq-queue")), "orders");
}

TEST(RelayMessage, RoutingKeyHeaderOverrides)
{
	Outgoing out = PrepareMessage(Queue(), Message(R"({"x-pgmq-routing-key": "orders.refunded"})"));
	EXPECT_EQ(out.routing_key, "orders.refunded");
	EXPECT_TRUE(out.chose_routing_key);
	EXPECT_TRUE(out.warning.empty());
	EXPECT_TRUE(out.refusal.empty());
}

TEST(RelayMessage, RoutingKeyHeaderRefusedWhenNotEnabled)
{
	// A sender does not choose the route unless configured; its message is
	// refused rather than sent where it did not ask to go.
	Outgoing out = PrepareMessage(Queue(false), Message(R"({"x-pgmq-routing-key": "payments"})"));
	EXPECT_FALSE(out.refusal.empty());
	EXPECT_FALSE(out.chose_routing_key);
}

TEST(RelayMessage, RoutingKeyHeaderOnlyFromTheList)
{
	QueueConfig q = Queue();
	q.routing_keys = {"orders.refunded", "orders.cancelled"};
	EXPECT_EQ(PrepareMessage(q, Message(R"({"x-pgmq-routing-key": "orders.cancelled"})")).routing_key,
			  "orders.cancelled");
	Outgoing out = PrepareMessage(q, Message(R"({"x-pgmq-routing-key": "payments"})"));
	EXPECT_NE(out.refusal.find("\"payments\" is not among the queue's routing_keys"), std::string::npos);
}

TEST(RelayMessage, BadRoutingKeyHeaderIsRefused)
{
	std::string long_key(256, 'k');
	for (std::string headers : {std::string(R"({"x-pgmq-routing-key": 5})"), std::string(R"({"x-pgmq-routing-key": ""})"),
								"{\"x-pgmq-routing-key\": \"" + long_key + "\"}"}) {
		Outgoing out = PrepareMessage(Queue(), Message(headers));
		EXPECT_EQ(out.refusal, "x-pgmq-routing-key must be a string of 1 to 255 bytes") << headers;
	}
}

TEST(RelayMessage, HeaderTheBrokerActsOnIsRefused)
{
	for (const char *headers : {R"({"n": 1, "CC": ["payments"]})", R"({"BCC": "payments", "x-trace-id": "t"})",
								R"({"x-amqp-1.0-properties": "forged"})", R"({"x-mqtt-publish-qos": 1})"}) {
		Outgoing out = PrepareMessage(Queue(), Message(headers));
		EXPECT_NE(out.refusal.find("header \""), std::string::npos) << headers;
		EXPECT_NE(out.refusal.find("RabbitMQ"), std::string::npos) << headers;
	}
	EXPECT_EQ(PrepareMessage(Queue(), Message(R"({"CC": "x"})")).refusal,
			  "header \"CC\": RabbitMQ routes the message to its keys too (sender-selected distribution)");
	// RabbitMQ's names are case-sensitive: "cc" is an ordinary header.
	Outgoing lower = PrepareMessage(Queue(), Message(R"({"cc": "payments"})"));
	EXPECT_TRUE(lower.refusal.empty());
	ASSERT_NE(Find(lower, "cc"), nullptr);
	// The relay's own headers are replaced, not refused.
	EXPECT_TRUE(PrepareMessage(Queue(), Message(R"({"x-pgmq-msg-id": 1})")).refusal.empty());
}

TEST(RelayMessage, PgmqAndApplicationHeadersPassUnchanged)
{
	// Every x-pgmq- header pgmq and its tools write, an application's x-
	// header and W3C trace context: forwarded as they are, nested values as
	// JSON text.
	Outgoing out = PrepareMessage(
		Queue(), Message(R"({"x-pgmq-deduplication-id": "order-7", "x-pgmq-priority": 5, "x-pgmq-group": "tenant-1",
		                    "x-pgmq-moved-from": "orders_in", "x-pgmq-dead-letter": true,
		                    "x-pgmq-failures": [{"at": "2026-01-01T00:00:00Z", "error": "timeout", "read_ct": 2}],
		                    "x-pgmq-relay-refused": "earlier reason", "x-pgmq-relay-source": "orders:3",
		                    "x-trace-id": "abc", "x-delay": 1000, "x-death": "text",
		                    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})"));
	EXPECT_TRUE(out.refusal.empty()) << out.refusal;
	EXPECT_TRUE(out.warning.empty()) << out.warning;
	std::map<std::string, HeaderValue> sent;
	for (std::size_t i = 3; i < out.headers.size(); i++)  // after the relay's own three
		sent.emplace(out.headers[i].name, out.headers[i].value);
	std::map<std::string, HeaderValue> expected{
		{"x-pgmq-deduplication-id", std::string("order-7")},
		{"x-pgmq-priority", std::int64_t{5}},
		{"x-pgmq-group", std::string("tenant-1")},
		{"x-pgmq-moved-from", std::string("orders_in")},
		{"x-pgmq-dead-letter", true},
		{"x-pgmq-failures", std::string(R"([{"at":"2026-01-01T00:00:00Z","error":"timeout","read_ct":2}])")},
		{"x-pgmq-relay-refused", std::string("earlier reason")},
		{"x-pgmq-relay-source", std::string("orders:3")},
		{"x-trace-id", std::string("abc")},
		{"x-delay", std::int64_t{1000}},
		{"x-death", std::string("text")},
		{"traceparent", std::string("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")}};
	EXPECT_EQ(sent, expected);
	EXPECT_EQ(out.headers.size(), 3u + expected.size());
}

TEST(RelayMessage, HeadersForwardedByType)
{
	Outgoing out = PrepareMessage(
		Queue(), Message(R"({"s": "t", "i": -7, "u": 18446744073709551615, "f": 1.5, "b": true, "n": null,
		                    "o": {"k": [1]}})"));
	EXPECT_EQ(std::get<std::string>(*Find(out, "s")), "t");
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "i")), -7);
	EXPECT_DOUBLE_EQ(std::get<double>(*Find(out, "u")), 18446744073709551615.0);
	EXPECT_DOUBLE_EQ(std::get<double>(*Find(out, "f")), 1.5);
	EXPECT_EQ(std::get<bool>(*Find(out, "b")), true);
	EXPECT_EQ(Find(out, "n"), nullptr);
	EXPECT_EQ(std::get<std::string>(*Find(out, "o")), R"({"k":[1]})");
}

TEST(RelayMessage, ProducerCannotForgeRelayHeaders)
{
	// Each of the relay's headers appears once, with the relay's value, also
	// when the producer spelt it in another case.
	Outgoing out = PrepareMessage(Queue(), Message(R"({"x-pgmq-msg-id": 1, "x-pgmq-queue": "payments",
	                                                  "x-pgmq-read-ct": 0, "X-PGMQ-Queue": "payments",
	                                                  "X-Pgmq-Msg-Id": 2, "x-pgmq-READ-CT": 9, "n": 1})"));
	EXPECT_TRUE(out.refusal.empty());
	std::vector<std::string> names;
	for (const auto &h : out.headers)
		names.push_back(h.name);
	EXPECT_EQ(names, (std::vector<std::string>{"x-pgmq-queue", "x-pgmq-msg-id", "x-pgmq-read-ct", "n"}));
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "x-pgmq-msg-id")), 42);
	EXPECT_EQ(std::get<std::string>(*Find(out, "x-pgmq-queue")), "orders");
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "x-pgmq-read-ct")), 3);
}

TEST(RelayMessage, NonObjectHeaders)
{
	EXPECT_FALSE(PrepareMessage(Queue(), Message("[1,2]")).warning.empty());
	EXPECT_TRUE(PrepareMessage(Queue(), Message("null")).warning.empty());
}
