#include <gtest/gtest.h>

#include "pgmq/console/options.hpp"

using namespace pgmq::console;

namespace {

Options Parse(std::vector<const char *> args)
{
	args.insert(args.begin(), "pgmq-console");
	return ParseOptions(static_cast<int>(args.size()), args.data());
}

}  // namespace

TEST(ConsoleOptions, DefaultsAreLoopbackAndReadOnly)
{
	Options o = Parse({});
	EXPECT_EQ(o.listen_host, "127.0.0.1");
	EXPECT_EQ(o.listen_port, 8432);
	EXPECT_FALSE(o.actions);
	EXPECT_EQ(o.sample_seconds, 10);
	EXPECT_TRUE(o.conninfo.empty());
}

TEST(ConsoleOptions, ParsesEveryOption)
{
	Options o = Parse({"--listen", "[::1]:9000", "--allow-actions", "--sample-seconds", "2", "--history-seconds", "600",
					   "--allowed-host", "console.example", "dbname=app user=ops"});
	EXPECT_EQ(o.listen_host, "::1");
	EXPECT_EQ(o.listen_port, 9000);
	EXPECT_TRUE(o.actions);
	EXPECT_EQ(o.sample_seconds, 2);
	EXPECT_EQ(o.history_seconds, 600);
	EXPECT_EQ(o.allowed_hosts, std::vector<std::string>{"console.example"});
	EXPECT_EQ(o.conninfo, "dbname=app user=ops");
	EXPECT_EQ(Parse({"--listen", "9001"}).listen_port, 9001);
}

TEST(ConsoleOptions, RefusesBadValuesNamingTheOption)
{
	EXPECT_THROW(Parse({"--listen", "host:99999"}), OptionsError);
	EXPECT_THROW(Parse({"--listen", ":80"}), OptionsError);
	EXPECT_THROW(Parse({"--sample-seconds", "0"}), OptionsError);
	EXPECT_THROW(Parse({"--sample-seconds"}), OptionsError);
	EXPECT_THROW(Parse({"--history-seconds", "120", "--sample-seconds", "600"}), OptionsError);
	EXPECT_THROW(Parse({"--what"}), OptionsError);
	EXPECT_THROW(Parse({"dbname=a", "dbname=b"}), OptionsError);
	try {
		Parse({"--sample-seconds", "x"});
		FAIL();
	} catch (const OptionsError &e) {
		EXPECT_NE(std::string(e.what()).find("--sample-seconds"), std::string::npos);
	}
}

TEST(ConsoleOptions, NoPasswordOnTheCommandLine)
{
	for (const char *conninfo : {"dbname=app password=s3cret", "postgresql://ops:s3cret@db/app"}) {
		try {
			Parse({conninfo});
			FAIL() << "a password on the command line was taken: " << conninfo;
		} catch (const OptionsError &e) {
			std::string what = e.what();
			EXPECT_NE(what.find("--password-file, PGPASSWORD or PGPASSFILE"), std::string::npos) << what;
			EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
		}
	}
	EXPECT_THROW(Parse({"dbname=app nonsense"}), OptionsError);
	Options o = Parse({"--password-file", "/run/secrets/pg", "--trust-queue-owners",
					   "host=db.example sslmode=verify-full sslrootcert=/ca.pem"});
	EXPECT_EQ(o.password_file, "/run/secrets/pg");
	EXPECT_TRUE(o.trust_queue_owners);
	EXPECT_FALSE(Parse({}).trust_queue_owners);
}

TEST(ConsoleOptions, TheEnvironmentThenTheCommandLine)
{
	const char *args[] = {"pgmq-console", "--listen", "127.0.0.1:9100"};
	auto env = [](const char *name) -> const char * {
		std::string n = name;
		if (n == "PGMQ_CONSOLE_LISTEN")
			return "0.0.0.0:8432";
		if (n == "PGMQ_CONSOLE_ALLOW_ACTIONS")
			return "true";
		if (n == "PGMQ_CONSOLE_ALLOWED_HOSTS")
			return "console.example, localhost:9000";
		if (n == "PGMQ_CONSOLE_PASSWORD_FILE")
			return "/run/secrets/pg";
		if (n == "PGMQ_CONSOLE_TRUST_QUEUE_OWNERS")
			return "0";
		return nullptr;
	};
	Options o = ParseOptions(1, args, env);
	EXPECT_EQ(o.listen_host, "0.0.0.0");
	EXPECT_EQ(o.listen_port, 8432);
	EXPECT_TRUE(o.actions);
	EXPECT_FALSE(o.trust_queue_owners);
	EXPECT_EQ(o.allowed_hosts, (std::vector<std::string>{"console.example", "localhost:9000"}));
	EXPECT_EQ(o.password_file, "/run/secrets/pg");
	EXPECT_EQ(ParseOptions(3, args, env).listen_port, 9100);  // the option wins
	auto bad = [](const char *name) -> const char * {
		return std::string(name) == "PGMQ_CONSOLE_ALLOW_ACTIONS" ? "maybe" : nullptr;
	};
	try {
		ParseOptions(1, args, bad);
		FAIL() << "a switch of \"maybe\" was taken";
	} catch (const OptionsError &e) {
		EXPECT_EQ(std::string(e.what()).rfind("PGMQ_CONSOLE_ALLOW_ACTIONS: expected 1 or 0", 0), 0u) << e.what();
	}
}
