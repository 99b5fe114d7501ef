// relay/test/one_line_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/batch_budget.hpp"
#include "pgmq/relay/one_line.hpp"

using namespace pgmq::relay;

TEST(RelayOneLine, FoldsLibpqErrors)
{
	EXPECT_EQ(OneLine("FATAL:  terminating connection due to administrator command\n"
					  "server closed the connection unexpectedly\n"
					  "\tThis probably means the server terminated abnormally\n"),
			  "FATAL:  terminating connection due to administrator command; server closed the connection "
			  "unexpectedly; This probably means the server terminated abnormally");
	EXPECT_EQ(OneLine("plain"), "plain");
	EXPECT_EQ(OneLine("a \r\n\r\n b\n"), "a; b");
	EXPECT_EQ(OneLine("\n\n"), "");
}

TEST(RelayBatchBudget, TakesAPrefixAndAlwaysTheFirst)
{
	BatchBudget budget(100);
	EXPECT_TRUE(budget.Take(150));  // larger than the limit, but first: relayed alone
	EXPECT_FALSE(budget.Take(1));
	BatchBudget second(100);
	EXPECT_TRUE(second.Take(60));
	EXPECT_TRUE(second.Take(40));
	EXPECT_FALSE(second.Take(1));
	EXPECT_FALSE(second.Take(0));  // a prefix: nothing after the first one left out
}
