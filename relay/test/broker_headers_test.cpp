// relay/test/broker_headers_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/broker_headers.hpp"

using namespace pgmq::relay;

TEST(BrokerHeaders, WhatRabbitMqActsOnIsNamed)
{
	for (const char *name : {"CC", "BCC", "x-amqp-1.0-properties", "x-amqp-1.0-app-properties",
							 "x-amqp-1.0-message-annotations", "x-amqp-1.0-footer", "x-mqtt-publish-qos", "x-mqtt-dup"})
		EXPECT_FALSE(BrokerUseOfHeader(name).empty()) << name;
	EXPECT_NE(BrokerUseOfHeader("CC").find("sender-selected distribution"), std::string_view::npos);
}

TEST(BrokerHeaders, ComparedExactlyAsRabbitMqDoes)
{
	// RabbitMQ looks header names up byte for byte: these route nothing.
	for (const char *name : {"cc", "Cc", "bcc", "Bcc", "X-AMQP-1.0-PROPERTIES", "X-Mqtt-Dup", "CC ", " BCC", "CCC"})
		EXPECT_TRUE(BrokerUseOfHeader(name).empty()) << name;
}

TEST(BrokerHeaders, PgmqAndApplicationHeadersAreConsumersData)
{
	for (const char *name :
		 {"x-pgmq-deduplication-id", "x-pgmq-priority", "x-pgmq-group", "x-pgmq-moved-from", "x-pgmq-dead-letter",
		  "x-pgmq-failures", "x-pgmq-routing-key", "x-pgmq-relay-refused", "x-pgmq-relay-source", "x-trace-id",
		  "traceparent", "tracestate", "x-delay", "x-death", "x-first-death-reason", "x-received-from", "x-match",
		  "x-deduplication-header", "x-stream-filter-value", "x-", "x", ""})
		EXPECT_TRUE(BrokerUseOfHeader(name).empty()) << name;
}
