// relay/test/config_test.cpp
#include <gtest/gtest.h>

#include <fstream>

#include "pgmq/relay/amqp_url.hpp"
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
	ASSERT_EQ(c.broker.addresses.size(), 1u);
	EXPECT_EQ(c.broker.addresses[0].host, "mq.example");
	EXPECT_EQ(c.broker.addresses[0].port, 5673);
	EXPECT_FALSE(c.broker.tls.enabled);
	EXPECT_EQ(c.broker.user, "relay");
	EXPECT_EQ(c.broker.password, "s@cret");
	EXPECT_EQ(c.broker.vhost, "prod");
	EXPECT_EQ(c.broker.heartbeat_s, 0);
	ASSERT_EQ(c.queues.size(), 2u);
	EXPECT_EQ(c.queues[0].name, "plain");
	EXPECT_EQ(c.queues[0].exchange, "");
	EXPECT_EQ(c.queues[0].routing_key, "plain");  // default exchange routes by queue name
	EXPECT_EQ(c.queues[0].after_confirm, AfterConfirm::Delete);
	EXPECT_FALSE(c.queues[0].routing_key_header);  // off unless configured
	EXPECT_EQ(c.batch_max_bytes, 8 * 1024 * 1024);
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[0]), "");
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
	EXPECT_EQ(ErrorOf(R"({"batchsize": 5})").rfind("relay.json: batchsize: unknown key (expected one of: backoff_",
													0),
			  0u);
	EXPECT_EQ(ErrorOf(R"({"batch_size": "5"})"), "relay.json: batch_size: must be an integer");
	EXPECT_EQ(ErrorOf(R"({"batch_size": 0})"), "relay.json: batch_size: must be between 1 and 10000");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "after_confirm": "drop"}]})"),
			  "relay.json: queues[0].after_confirm: must be \"delete\" or \"archive\"");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"exchange": "x"}]})"), "relay.json: queues[0]: a queue needs a \"name\"");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a;drop"}]})"),
			  "relay.json: queues[0].name: queue name contains invalid characters: $, ;, --, or '");
	EXPECT_EQ(ErrorOf(R"({"queues": [7]})"), "relay.json: queues[0]: must be a queue name or an object");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"url": "http://x"}})"),
			  "relay.json: rabbitmq.url: AMQP URL must start with amqp:// or amqps://");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"port": 70000}})"), "relay.json: rabbitmq.port: must be between 1 and 65535");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"pasword": "x"}})").rfind("relay.json: rabbitmq.pasword: unknown key", 0), 0u);
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "routing_keys": []}]})"),
			  "relay.json: queues[0].routing_keys: must be a non-empty array of strings");
	EXPECT_EQ(ErrorOf(R"({"batch_max_bytes": 10})"), "relay.json: batch_max_bytes: must be between 1024 and 1073741824");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"tls": {"cert_file": "c.pem"}}})"),
			  "relay.json: rabbitmq.tls: a client certificate needs both cert_file and key_file");
	EXPECT_EQ(ErrorOf(R"({"rabbitmq": {"urls": ["amqp://a", "amqp://b"], "port": 1}})"),
			  "relay.json: rabbitmq.port: only with a single broker address");
	// Every error is one line.
	for (const char *bad : {"{", R"({"x": 1})", R"({"queues": [{"name": "a", "x": 1}]})"})
		EXPECT_EQ(ErrorOf(bad).find('\n'), std::string::npos) << bad;
}

TEST(RelayConfig, JsonErrorsDoNotQuoteTheFile)
{
	// nlohmann names the last token read, which may be a password.
	std::string error = ErrorOf(R"({"rabbitmq": {"url": "amqp://relay:hunter2@mq/"} "queues": []})");
	EXPECT_EQ(error.rfind("relay.json: not valid JSON: parse error at line 1", 0), 0u) << error;
	EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
	EXPECT_EQ(error.find("last read"), std::string::npos) << error;
}

TEST(RelayConfig, ValidateWholeConfiguration)
{
	Config c;
	EXPECT_THROW(Validate(c), ConfigError);  // no queue
	c.queues.push_back({"a", "", "a", AfterConfirm::Delete, false, {}, "", "", false, ""});
	EXPECT_NO_THROW(Validate(c));
	c.queues.push_back(c.queues.back());
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

TEST(RelayConfig, SenderChosenRoutes)
{
	Config c;
	QueueConfig q;
	q.name = q.routing_key = "orders";
	q.routing_key_header = true;
	c.queues = {q};
	// The default exchange routes by queue name: a sender would pick the queue.
	EXPECT_THROW(Validate(c), ConfigError);
	c.queues[0].routing_keys = {"orders.refunded"};
	EXPECT_NO_THROW(Validate(c));
	c.queues[0].routing_keys.clear();
	c.queues[0].exchange = "events";  // an exchange's bindings decide
	EXPECT_NO_THROW(Validate(c));
	c.queues[0].routing_key_header = false;
	c.queues[0].routing_keys = {"x"};
	EXPECT_THROW(Validate(c), ConfigError);  // a list that nothing reads
}

TEST(RelayConfig, DeadLetterQueue)
{
	Config c = ParseConfig(R"({"dead_letter_queue": "dlq", "queues": ["a", {"name": "b", "dead_letter_queue": "b_dlq"}]})",
						   "f");
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[0]), "dlq");
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[1]), "b_dlq");
	EXPECT_NO_THROW(Validate(c));
	c.dead_letter_queue = "a";
	EXPECT_THROW(Validate(c), ConfigError);  // its own
	EXPECT_THROW(ParseConfig(R"({"dead_letter_queue": "a;b"})", "f"), ConfigError);
	CommandLine line = Line({"--dead-letter-queue", "all", "--queue", "q", "--dead-letter-queue", "mine", "--queue", "r"});
	ApplyOverrides(line, c);
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[0]), "mine");
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[1]), "all");
}

TEST(RelayConfig, ClusterAndTls)
{
	Config c = ParseConfig(R"({"rabbitmq": {"urls": ["amqps://relay@a.mq/prod", "amqps://b.mq:5700/prod"],
	                                       "tls": {"ca_file": "/etc/ca.pem"}}, "queues": ["q"]})",
						   "f");
	ASSERT_EQ(c.broker.addresses.size(), 2u);
	EXPECT_EQ(c.broker.addresses[0], (BrokerAddress{"a.mq", 5671}));  // amqps' port
	EXPECT_EQ(c.broker.addresses[1], (BrokerAddress{"b.mq", 5700}));
	EXPECT_TRUE(c.broker.tls.enabled);
	EXPECT_EQ(c.broker.tls.ca_file, "/etc/ca.pem");
	EXPECT_EQ(c.broker.user, "relay");
	EXPECT_EQ(c.broker.vhost, "prod");
	EXPECT_NO_THROW(Validate(c));
	// One broker: the nodes share scheme, vhost and credentials.
	EXPECT_THROW(ParseConfig(R"({"rabbitmq": {"urls": ["amqps://a", "amqp://b"]}})", "f"), ConfigError);
	EXPECT_THROW(ParseConfig(R"({"rabbitmq": {"urls": ["amqp://a/x", "amqp://b/y"]}})", "f"), ConfigError);
	EXPECT_THROW(ParseConfig(R"({"rabbitmq": {"urls": ["amqp://u@a", "amqp://v@b"]}})", "f"), ConfigError);
	EXPECT_THROW(ParseConfig(R"({"rabbitmq": {"url": "amqp://a", "urls": ["amqp://b"]}})", "f"), ConfigError);
	// TLS files without amqps would silently go unused.
	Config plain = ParseConfig(R"({"rabbitmq": {"tls": {"ca_file": "ca.pem"}}, "queues": ["q"]})", "f");
	EXPECT_THROW(Validate(plain), ConfigError);
	// --amqp-url flags together replace the file's addresses.
	ApplyOverrides(Line({"--amqp-url", "amqp://x:1/", "--amqp-url", "amqp://y:2/"}), c);
	ASSERT_EQ(c.broker.addresses.size(), 2u);
	EXPECT_EQ(c.broker.addresses[1], (BrokerAddress{"y", 2}));
	EXPECT_FALSE(c.broker.tls.enabled);
}

TEST(RelayConfig, PasswordFromFileOrEnvironment)
{
	BrokerConfig b;
	ApplyAmqpUrl("amqp://relay:from-url@h/", b);
	ResolvePassword(b, nullptr);
	EXPECT_EQ(b.password, "from-url");
	ResolvePassword(b, "from-env");
	EXPECT_EQ(b.password, "from-env");
	std::string path = testing::TempDir() + "relay-password";
	{
		std::ofstream file(path);
		file << "from-file\nsecond line\n";
	}
	b.password_file = path;
	ResolvePassword(b, "from-env");
	EXPECT_EQ(b.password, "from-file");  // the file wins, first line only
	b.password_file = path + ".missing";
	try {
		ResolvePassword(b, nullptr);
		ADD_FAILURE() << "a missing password file must be an error";
	} catch (const ConfigError &e) {
		EXPECT_NE(std::string(e.what()).find("rabbitmq.password_file"), std::string::npos);
	}
	CommandLine line = Line({"--amqp-password-file", "/run/secrets/mq"});
	Config c;
	ApplyOverrides(line, c);
	EXPECT_EQ(c.broker.password_file, "/run/secrets/mq");
}

TEST(RelayConfig, AmqpUrl)
{
	BrokerConfig b;
	ApplyAmqpUrl("amqp://localhost", b);
	EXPECT_EQ(b.addresses.at(0).host, "localhost");
	EXPECT_EQ(b.addresses.at(0).port, 5672);
	EXPECT_EQ(b.vhost, "/");
	EXPECT_EQ(b.user, "guest");
	ApplyAmqpUrl("amqp://u:p@[::1]:5699/%2Fv", b);
	EXPECT_EQ(b.addresses.at(0).host, "::1");
	EXPECT_EQ(b.addresses.at(0).port, 5699);
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
	EXPECT_EQ(c.broker.addresses.at(0).host, "h");
	EXPECT_EQ(c.broker.addresses.at(0).port, 1);
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
	EXPECT_THROW(ApplyOverrides(Line({"--batch-max-bytes", "100"}), c), ConfigError);
	EXPECT_THROW(ApplyOverrides(Line({"--amqp-url", "amqp://h:0/"}), c), ConfigError);
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

TEST(RelayConfig, DatabasePasswordNeverOnTheCommandLine)
{
	Config c;
	try {
		ApplyOverrides(Line({"--postgres", "host=db dbname=app password=s3cret", "--queue", "q"}), c);
		FAIL() << "a password on the command line was taken";
	} catch (const ConfigError &e) {
		std::string what = e.what();
		EXPECT_EQ(what.rfind("--postgres: holds a password", 0), 0u) << what;
		EXPECT_NE(what.find("--postgres-password-file"), std::string::npos) << what;
		EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
	}
	EXPECT_THROW(ApplyOverrides(Line({"--postgres", "postgresql://app:s3cret@db/app"}), c), ConfigError);
	ApplyOverrides(Line({"--postgres", "host=db sslmode=verify-full sslrootcert=/ca.pem", "--postgres-password-file",
						 "/run/secrets/pg", "--create-dead-letter-queues", "--queue", "q"}),
				   c);
	EXPECT_EQ(c.postgres, "host=db sslmode=verify-full sslrootcert=/ca.pem");
	EXPECT_EQ(c.postgres_password_file, "/run/secrets/pg");
	EXPECT_TRUE(c.create_dead_letter_queues);
}

TEST(RelayConfig, DatabasePasswordFromItsFile)
{
	Config c = ParseConfig(R"({"postgres": "host=db", "postgres_password_file": "", "create_dead_letter_queues": true,
	                          "queues": ["q"]})",
						   "relay.json");
	EXPECT_TRUE(c.create_dead_letter_queues);
	ResolvePostgresPassword(c);  // no file: libpq's PGPASSWORD or PGPASSFILE apply
	EXPECT_EQ(c.postgres_password, "");
	std::string path = testing::TempDir() + "relay-pg-password";
	std::ofstream(path) << "pg-s3cret\n";
	c.postgres_password_file = path;
	ResolvePostgresPassword(c);
	EXPECT_EQ(c.postgres_password, "pg-s3cret");
	c.postgres = "host=db password=other";  // in the file's connection string too: which one?
	EXPECT_THROW(ResolvePostgresPassword(c), ConfigError);
	c.postgres = "host=db";
	c.postgres_password_file = path + ".missing";
	try {
		ResolvePostgresPassword(c);
		FAIL() << "a missing password file was taken";
	} catch (const ConfigError &e) {
		EXPECT_EQ(std::string(e.what()).rfind("postgres_password_file: ", 0), 0u) << e.what();
	}
	EXPECT_NE(ErrorOf(R"({"create_dead_letter_queues": "yes"})").find("create_dead_letter_queues: must be true or false"),
			  std::string::npos);
}

TEST(RelayConfig, EnvironmentBetweenFileAndFlags)
{
	Config c = ParseConfig(R"({"metrics_listen": "127.0.0.1:9464", "postgres_password_file": "/file", "queues": ["q"]})",
						   "relay.json");
	ApplyEnvironment(c, [](const char *name) -> const char * {
		std::string n = name;
		if (n == "PGMQ_RELAY_METRICS_LISTEN")
			return "0.0.0.0:9464";
		if (n == "PGMQ_RELAY_POSTGRES_PASSWORD_FILE")
			return "/run/secrets/pg";
		return nullptr;
	});
	EXPECT_EQ(c.metrics_listen, "0.0.0.0:9464");
	EXPECT_EQ(c.postgres_password_file, "/run/secrets/pg");
	ApplyOverrides(Line({"--metrics-listen", "127.0.0.1:9999"}), c);
	EXPECT_EQ(c.metrics_listen, "127.0.0.1:9999");
	Config unset = ParseConfig(R"({"metrics_listen": "127.0.0.1:9464", "queues": ["q"]})", "relay.json");
	ApplyEnvironment(unset, [](const char *) -> const char * { return ""; });
	EXPECT_EQ(unset.metrics_listen, "127.0.0.1:9464");
}

TEST(RelayConfig, StreamConsumerGroup)
{
	Config c = ParseConfig(R"({"queues": [
		{"name": "orders", "group": "rabbitmq", "exchange": "events", "routing_key": "orders.created",
		 "dead_letter_queue": "orders_dead"},
		{"name": "audit", "group": "relay", "subscribe": true, "since": "-infinity"},
		"plain"]})",
						   "relay.json");
	ASSERT_EQ(c.queues.size(), 3u);
	EXPECT_TRUE(c.queues[0].is_stream());
	EXPECT_EQ(c.queues[0].group, "rabbitmq");
	EXPECT_FALSE(c.queues[0].subscribe);
	EXPECT_EQ(c.queues[0].since, "");
	EXPECT_EQ(DeadLetterQueueOf(c, c.queues[0]), "orders_dead");
	EXPECT_EQ(DescribeSource(c.queues[0]), "stream orders, group rabbitmq");
	EXPECT_TRUE(c.queues[1].subscribe);
	EXPECT_EQ(c.queues[1].since, "-infinity");
	EXPECT_EQ(c.queues[1].routing_key, "audit");  // the default exchange routes by the stream's name
	EXPECT_FALSE(c.queues[2].is_stream());
	EXPECT_EQ(DescribeSource(c.queues[2]), "queue plain");
	EXPECT_NO_THROW(Validate(c));

	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": ""}]})"),
			  "relay.json: queues[0].group: must be a consumer group's name (not empty)");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": 7}]})"), "relay.json: queues[0].group: must be a string");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "subscribe": true}]})"),
			  "relay.json: queues[0].subscribe: only for a stream's consumer group (give \"group\")");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": "g", "subscribe": "yes"}]})"),
			  "relay.json: queues[0].subscribe: must be true or false");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": "g", "since": "-infinity"}]})"),
			  "relay.json: queues[0].since: only with \"subscribe\": true (it is pgmq.subscribe's since)");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": "g", "subscribe": true, "since": ""}]})"),
			  "relay.json: queues[0].since: must be a time or \"-infinity\"");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a", "group": "g", "after_confirm": "delete"}]})"),
			  "relay.json: queues[0].after_confirm: a consumer group acknowledges a confirmed message (pgmq.ack): "
			  "the stream keeps it for its other groups");
	EXPECT_EQ(ErrorOf(R"({"queues": [{"name": "a;b", "group": "g"}]})"),
			  "relay.json: queues[0].name: queue name contains invalid characters: $, ;, --, or '");

	// One group per stream and relay: the stream's name is the source's name.
	Config twice = ParseConfig(R"({"queues": [{"name": "s", "group": "a"}, {"name": "s", "group": "b"}]})", "f");
	try {
		Validate(twice);
		ADD_FAILURE() << "a stream listed twice was accepted";
	} catch (const ConfigError &e) {
		EXPECT_STREQ(e.what(), "queue \"s\" is listed twice (a relay reads a stream as one group)");
	}
	Config own = ParseConfig(R"({"queues": [{"name": "s", "group": "a", "dead_letter_queue": "s"}]})", "f");
	EXPECT_THROW(Validate(own), ConfigError);

	// The command line: --group and --subscribe refine the --queue before them.
	Config flags;
	ApplyOverrides(Line({"--queue", "s", "--group", "relay", "--subscribe", "--exchange", "x", "--queue", "q"}), flags);
	ASSERT_EQ(flags.queues.size(), 2u);
	EXPECT_EQ(flags.queues[0].group, "relay");
	EXPECT_TRUE(flags.queues[0].subscribe);
	EXPECT_EQ(flags.queues[0].exchange, "x");
	EXPECT_FALSE(flags.queues[1].is_stream());
	EXPECT_NO_THROW(Validate(flags));
	Config bad;
	EXPECT_THROW(ApplyOverrides(Line({"--group", "g"}), bad), ConfigError);                // no --queue before
	EXPECT_THROW(ApplyOverrides(Line({"--queue", "s", "--subscribe"}), bad), ConfigError);  // no --group
	EXPECT_THROW(ApplyOverrides(Line({"--queue", "s", "--group="}), bad), ConfigError);
	Config archived;
	ApplyOverrides(Line({"--queue", "s", "--group", "g", "--archive"}), archived);
	try {
		Validate(archived);
		ADD_FAILURE() << "--archive with --group was accepted";
	} catch (const ConfigError &e) {
		EXPECT_NE(std::string(e.what()).find("acknowledges a confirmed message (pgmq.ack)"), std::string::npos);
	}
}
