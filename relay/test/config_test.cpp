// relay/test/config_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/config.hpp"

using namespace pgmq::relay;

namespace {

std::string ErrorOf(const std::string &json)
{
	try {
		ParseConfig(json, "relay.json");
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

CommandLine Line(std::vector<const char *> args)
{
	args.insert(args.begin(), "pgmq-relay");
	return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

}  // namespace

TEST(RelayConfig, FullFile)
{
	Config c = ParseConfig(R"({
		"postgres": "host=/tmp dbname=app",
		"rabbitmq": {"url": "amqp://relay:s%40cret@mq.example:5673/prod", "heartbeat_s": 0, "confirm_timeout_ms": 2000},
		"queues": ["plain", {"name": "orders", "exchange": "events", "routing_key": "orders.created",
		                     "after_confirm": "archive", "routing_key_header": false}],
		"batch_size": 50, "visibility_timeout_s": 60, "poll_s": 2, "metrics_listen": "127.0.0.1:9464"
	})",
						   "relay.json");
	EXPECT_EQ(c.postgres, "host=/tmp dbname=app");
	EXPECT_EQ(c.broker.host, "mq.example");
	EXPECT_EQ(c.broker.port, 5673);
	EXPECT_EQ(c.broker.user, "relay");
	EXPECT_EQ(c.broker.password, "s@cret");
	EXPECT_EQ(c.broker.vhost, "prod");
	EXPECT_EQ(c.broker.heartbeat_s, 0);
	ASSERT_EQ(c.queues.size(), 2u);
	EXPECT_EQ(c.queues[0].name, "plain");
	EXPECT_EQ(c.queues[0].exchange, "");
	EXPECT_EQ(c.queues[0].routing_key, "plain");  // default exchange routes by queue name
	EXPECT_EQ(c.queues[0].after_confirm, AfterConfirm::Delete);
	EXPECT_TRUE(c.queues[0].routing_key_header);
	EXPECT_EQ(c.queues[1].exchange, "events");
	EXPECT_EQ(c.queues[1].routing_key, "orders.created");
	EXPECT_EQ(c.queues[1].after_confirm, AfterConfirm::Archive);
	EXPECT_FALSE(c.queues[1].routing_key_header);
	EXPECT_EQ(c.batch_size, 50);
	EXPECT_EQ(c.visibility_timeout_s, 60);
	EXPECT_EQ(c.poll_s, 2);
	EXPECT_NO_THROW(Validate(c));
}

TEST(RelayConfig, ErrorsNameThePlace)
{
	EXPECT_NE(ErrorOf("{").find("relay.json: not valid JSON"), std::string::npos);
	EXPECT_EQ(ErrorOf("[]"), "relay.json: the top level must be a JSON object");
	EXPECT_EQ(ErrorOf(R"({"batchsize": 5})"), "relay.json: : unknown key \"batchsize\"");
	EXPECT_EQ(ErrorOf(R"({"batch_size": "5"})"), "relay.json: batch_size: must be an integer");
	EXPECT_EQ(ErrorOf(R"({"batch_size": 0})"), "relay.json: batch_size: must be between 1 and 10000");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "after_confirm": "drop"}]})"),
			  "relay.json: queues[0].after_confirm: must be \"delete\" or \"archive\"");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"exchange": "x"}]})"), "relay.json: queues[0]: a queue needs a \"name\"");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a;drop"}]})"),
			  "relay.json: queues[0].name: queue name contains invalid characters: $, ;, --, or \\'");
	EXPECT_EQ(ErrorOf(R"({"queues": [7]})"), "relay.json: queues[0]: must be a queue name or an object");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"url": "http://x"}})"),
			  "relay.json: rabbitmq.url: AMQP URL must start with amqp:// (amqps is not supported)");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"port": 70000}})"), "relay.json: rabbitmq.port: must be between 1 and 65535");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"pasword": "x"}})"), "relay.json: rabbitmq: unknown key \"pasword\"");
}

TEST(RelayConfig, ValidateWholeConfiguration)
{
	Config c;
	EXPECT_THROW(Validate(c), ConfigError);  // no queue
	c.queues.push_back({"a", "", "a"});
	EXPECT_NO_THROW(Validate(c));
	c.queues.push_back({"a", "", "a"});
	EXPECT_THROW(Validate(c), ConfigError);  // twice
	c.queues.pop_back();
	c.visibility_timeout_s = 5;
	c.broker.confirm_timeout_ms = 5000;  // vt must outlast the confirm wait
	EXPECT_THROW(Validate(c), ConfigError);
	c.broker.confirm_timeout_ms = 4000;
	EXPECT_NO_THROW(Validate(c));
	c.poll_s = 30;
	c.broker.heartbeat_s = 30;  // an empty read must not outlast a heartbeat
	EXPECT_THROW(Validate(c), ConfigError);
	c.broker.heartbeat_s = 0;
	EXPECT_NO_THROW(Validate(c));
	c.metrics_listen = "9464";
	EXPECT_THROW(Validate(c), ConfigError);
}

TEST(RelayConfig, AmqpUrl)
{
	BrokerConfig b;
	ApplyAmqpUrl("amqp://localhost", b);
	EXPECT_EQ(b.host, "localhost");
	EXPECT_EQ(b.port, 5672);
	EXPECT_EQ(b.vhost, "/");
	EXPECT_EQ(b.user, "guest");
	ApplyAmqpUrl("amqp://u:p@[::1]:5699/%2Fv", b);
	EXPECT_EQ(b.host, "::1");
	EXPECT_EQ(b.port, 5699);
	EXPECT_EQ(b.vhost, "/v");
	EXPECT_EQ(b.user, "u");
	EXPECT_EQ(b.password, "p");
	EXPECT_THROW(ApplyAmqpUrl("amqp://h:99999/", b), ConfigError);
	EXPECT_THROW(ApplyAmqpUrl("amqp://h:x/", b), ConfigError);
	EXPECT_THROW(ApplyAmqpUrl("amqp://u:%zz@h/", b), ConfigError);
}

TEST(RelayConfig, FlagsOverrideTheFile)
{
	Config c = ParseConfig(R"({"queues": ["a", "b"], "batch_size": 10, "postgres": "dbname=x"})", "f");
	CommandLine line =
		Line({"--config", "f.json", "--batch-size=100", "--postgres", "dbname=y", "--queue", "q1", "--exchange", "ex",
			  "--routing-key", "rk", "--archive", "--queue", "q2", "--drain", "--amqp-url", "amqp://h:1/"});
	EXPECT_EQ(line.config_path, "f.json");
	ApplyOverrides(line, c);
	EXPECT_EQ(c.batch_size, 100);
	EXPECT_EQ(c.postgres, "dbname=y");
	ASSERT_EQ(c.queues.size(), 2u);  // --queue replaces the file's list
	EXPECT_EQ(c.queues[0].name, "q1");
	EXPECT_EQ(c.queues[0].exchange, "ex");
	EXPECT_EQ(c.queues[0].routing_key, "rk");
	EXPECT_EQ(c.queues[0].after_confirm, AfterConfirm::Archive);
	EXPECT_EQ(c.queues[1].name, "q2");
	EXPECT_EQ(c.queues[1].routing_key, "q2");
	EXPECT_EQ(c.queues[1].after_confirm, AfterConfirm::Delete);
	EXPECT_TRUE(c.drain);
	EXPECT_EQ(c.broker.host, "h");
	EXPECT_EQ(c.broker.port, 1);
}

TEST(RelayConfig, BadFlags)
{
	EXPECT_THROW(Line({"--bogus"}), ConfigError);
	EXPECT_THROW(Line({"--batch-size"}), ConfigError);
	EXPECT_THROW(Line({"--drain=yes"}), ConfigError);
	Config c;
	EXPECT_THROW(ApplyOverrides(Line({"--exchange", "x"}), c), ConfigError);  // before any --queue
	EXPECT_THROW(ApplyOverrides(Line({"--batch-size", "-1"}), c), ConfigError);
	EXPECT_THROW(ApplyOverrides(Line({"--batch-size", "12x"}), c), ConfigError);
	EXPECT_THROW(ApplyOverrides(Line({"--queue", "bad$name"}), c), ConfigError);
	EXPECT_TRUE(Line({"--help"}).help);
}

TEST(RelayConfig, MissingFile) { EXPECT_THROW(LoadConfigFile("/nonexistent/relay.json"), ConfigError); }

TEST(RelayConfig, ListenAddress)
{
	EXPECT_EQ(SplitListenAddress("127.0.0.1:9464"), (std::pair<std::string, int>{"127.0.0.1", 9464}));
	EXPECT_EQ(SplitListenAddress(":9464"), (std::pair<std::string, int>{"0.0.0.0", 9464}));
	EXPECT_EQ(SplitListenAddress("[::1]:1"), (std::pair<std::string, int>{"::1", 1}));
	EXPECT_THROW(SplitListenAddress("localhost"), ConfigError);
}
