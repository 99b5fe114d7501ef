// common/test/pgmq_features_test.cpp
#include "pgmq_features.hpp"

#include <gtest/gtest.h>

using namespace pgmq::pg;

namespace {

const char kUpstreamCore[] = "archive,create,delete,list_queues,metrics,metrics_all,purge_queue,read,read_with_poll,"
							 "send,send_batch,set_vt";

}  // namespace

TEST(PgmqFeatures, ThisExtensionOffersEverything)
{
	std::string functions = std::string(kUpstreamCore) +
							",_tables_running_foreign_code,list_policies,pause,resume,set_priority,partition_status,"
							"retry,dead_letter,redrive,redrive_all,queue_state,create_stream,subscribe,read_stream,"
							"read_stream_with_poll,ack,stream_groups";
	PgmqFeatures f = ParseFeatures(std::string("1.13.1+cpp.2"), functions, true, true, true);
	EXPECT_TRUE(f.present && f.extension && f.pgmq_cpp);
	EXPECT_TRUE(f.table_rule && f.policies && f.pause && f.priorities && f.partition_runway && f.failure_reasons &&
				f.redrive && f.default_partition_rows && f.streams);
	EXPECT_TRUE(NotAvailable(f).empty());
	EXPECT_EQ(Describe(f), "pgmq-cpp 1.13.1+cpp.2 (extension)");
}

TEST(PgmqFeatures, UpstreamExtensionLacksWhatNeedsPgmqCpp)
{
	PgmqFeatures f = ParseFeatures(std::string("1.12.0"), std::string(kUpstreamCore) + ",read_grouped_head_with_poll",
								   false, false, false);
	EXPECT_TRUE(f.present && f.extension);
	EXPECT_FALSE(f.pgmq_cpp || f.table_rule || f.policies || f.pause || f.partition_runway || f.redrive ||
				 f.default_partition_rows || f.streams);
	EXPECT_EQ(ShortName(f), "upstream pgmq 1.12.0");
	EXPECT_EQ(JoinWords(NotAvailable(f)),
			  "dead-letter policies, pause, priorities, partition runway, failure reasons and redrive");
}

TEST(PgmqFeatures, SqlOnlyInstallShowsItsReleaseByItsFunctions)
{
	std::string core = kUpstreamCore;
	PgmqFeatures f13 = ParseFeatures(std::nullopt, core + ",send_topic,read_grouped_head_with_poll", true, false, false);
	EXPECT_TRUE(f13.present);
	EXPECT_FALSE(f13.extension || f13.pgmq_cpp);
	EXPECT_EQ(f13.version, "1.13");
	EXPECT_TRUE(f13.default_partition_rows);
	EXPECT_EQ(Describe(f13),
			  "upstream pgmq 1.13 (SQL-only install in schema pgmq, no extension row: the release its functions show)");
	EXPECT_EQ(ParseFeatures(std::nullopt, core + ",send_topic,read_grouped_head_with_poll", false, false, false).version,
			  "1.12");
	EXPECT_EQ(ParseFeatures(std::nullopt, core + ",send_topic", false, false, false).version, "1.11");
	EXPECT_EQ(ParseFeatures(std::nullopt, core, false, false, false).version, "older than 1.9");
}

TEST(PgmqFeatures, NoPgmqAndMissingFunctions)
{
	PgmqFeatures none = ParseFeatures(std::nullopt, std::nullopt, false, false, false);
	EXPECT_FALSE(none.present);
	EXPECT_NE(Describe(none).find("no pgmq"), std::string::npos);
	PgmqFeatures old = ParseFeatures(std::nullopt, std::string("send,read,list_queues,delete"), false, false, false);
	EXPECT_EQ(old.Missing({"read_with_poll", "delete", "set_vt"}), (std::vector<std::string>{"read_with_poll", "set_vt"}));
}

TEST(PgmqFeatures, APauseFunctionWithoutItsColumnIsNoPause)
{
	PgmqFeatures f = ParseFeatures(std::string("1.13.1"), std::string(kUpstreamCore) + ",pause,resume,list_policies",
								   false, true, false);
	EXPECT_FALSE(f.pause);
	EXPECT_TRUE(f.policies);
}

TEST(PgmqFeatures, JoinWords)
{
	EXPECT_EQ(JoinWords({}), "");
	EXPECT_EQ(JoinWords({"a"}), "a");
	EXPECT_EQ(JoinWords({"a", "b"}), "a and b");
}
