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

TEST(RelayMessage, BrokerReservedHeadersAreRefused)
{
	for (const char *name : {"CC", "BCC", "cc", "Bcc", "x-delay", "x-death", "X-Match", "x-pgmq-other"})
		EXPECT_TRUE(IsBrokerReservedHeader(name)) << name;
	for (const char *name : {"n", "ccx", "xdelay", "trace-id", "x", ""})
		EXPECT_FALSE(IsBrokerReservedHeader(name)) << name;
	Outgoing out = PrepareMessage(Queue(), Message(R"({"n": 1, "CC": "anything"})"));
	EXPECT_EQ(out.refusal, "header \"CC\" is reserved for the broker");
	// The relay's own headers are replaced, not refused.
	EXPECT_TRUE(PrepareMessage(Queue(), Message(R"({"x-pgmq-msg-id": 1})")).refusal.empty());
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
