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
