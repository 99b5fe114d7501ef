// relay/test/message_test.cpp
#include <gtest/gtest.h>

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
	EXPECT_TRUE(out.warning.empty());
}

TEST(RelayMessage, RoutingKeyHeaderCanBeDisabled)
{
	Outgoing out = PrepareMessage(Queue(false), Message(R"({"x-pgmq-routing-key": "orders.refunded"})"));
	EXPECT_EQ(out.routing_key, "orders.created");
}

TEST(RelayMessage, BadRoutingKeyHeaderFallsBackWithWarning)
{
	for (const char *headers : {R"({"x-pgmq-routing-key": 5})", R"({"x-pgmq-routing-key": ""})"}) {
		Outgoing out = PrepareMessage(Queue(), Message(headers));
		EXPECT_EQ(out.routing_key, "orders.created") << headers;
		EXPECT_FALSE(out.warning.empty()) << headers;
	}
	std::string long_key(256, 'k');
	Outgoing out = PrepareMessage(Queue(), Message("{\"x-pgmq-routing-key\": \"" + long_key + "\"}"));
	EXPECT_EQ(out.routing_key, "orders.created");
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
	Outgoing out = PrepareMessage(Queue(), Message(R"({"x-pgmq-msg-id": 1, "x-pgmq-queue": "payments"})"));
	int ids = 0;
	for (const auto &h : out.headers)
		ids += h.name == "x-pgmq-msg-id" || h.name == "x-pgmq-queue";
	EXPECT_EQ(ids, 2);
	EXPECT_EQ(std::get<std::int64_t>(*Find(out, "x-pgmq-msg-id")), 42);
	EXPECT_EQ(std::get<std::string>(*Find(out, "x-pgmq-queue")), "orders");
}

TEST(RelayMessage, NonObjectHeaders)
{
	EXPECT_FALSE(PrepareMessage(Queue(), Message("[1,2]")).warning.empty());
	EXPECT_TRUE(PrepareMessage(Queue(), Message("null")).warning.empty());
}
