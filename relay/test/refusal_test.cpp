// relay/test/refusal_test.cpp
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pgmq/relay/refusal.hpp"

using namespace pgmq::relay;

TEST(RelayRefusal, WhichChannelClosesAreTheMessages)
{
	EXPECT_TRUE(RefusedForItself(406, false));   // over max_message_size, a bad header
	EXPECT_TRUE(RefusedForItself(403, true));    // its own routing key is not permitted
	EXPECT_FALSE(RefusedForItself(403, false));  // the configured route: every message alike
	EXPECT_FALSE(RefusedForItself(404, false));  // no such exchange
	EXPECT_FALSE(RefusedForItself(541, false));  // internal error
	EXPECT_TRUE(MayBeOneMessage(406));
	EXPECT_TRUE(MayBeOneMessage(403));
	EXPECT_FALSE(MayBeOneMessage(404));
}

TEST(RelayRefusal, DeadLetterHeadersKeepTheOriginalAndSayWhy)
{
	QueueMessage m;
	m.msg_id = 7;
	m.headers = R"({"CC": "anything", "n": 1})";
	const std::string reason =
		"header \"CC\": RabbitMQ routes the message to its keys too (sender-selected distribution)";
	auto headers = nlohmann::json::parse(DeadLetterHeaders("orders", m, reason));
	EXPECT_EQ(headers["CC"], "anything");
	EXPECT_EQ(headers["n"], 1);
	EXPECT_EQ(headers[kRefusedHeader], reason);
	EXPECT_EQ(headers[kSourceHeader], "orders:7");

	m.headers = "[1, 2]";  // pgmq takes any JSON as headers
	headers = nlohmann::json::parse(DeadLetterHeaders("orders", m, "why"));
	EXPECT_EQ(headers["x-pgmq-relay-headers"], nlohmann::json::parse("[1, 2]"));
	m.headers = "";
	headers = nlohmann::json::parse(DeadLetterHeaders("orders", m, "bad \xff byte"));
	EXPECT_EQ(headers.size(), 2u);

	// A stream's consumer group: the group that read it too.
	headers = nlohmann::json::parse(DeadLetterHeaders("orders", m, "why", "rabbitmq"));
	EXPECT_EQ(headers[kSourceHeader], "orders:7");
	EXPECT_EQ(headers[kGroupHeader], "rabbitmq");
	// Sent again to a queue and refused there: the group no longer applies.
	m.headers = headers.dump();
	headers = nlohmann::json::parse(DeadLetterHeaders("orders_dead", m, "again"));
	EXPECT_FALSE(headers.contains(kGroupHeader));
	EXPECT_EQ(headers[kSourceHeader], "orders_dead:7");
}
