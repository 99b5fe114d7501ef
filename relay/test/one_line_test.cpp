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

TEST(RelayBatchBudget, AStreamReadsWhatFitted)
{
	ReadSize size(100);
	EXPECT_EQ(size.next(), 100);
	size.After(100, 0);
	EXPECT_EQ(size.next(), 100);
	size.After(7, 93);  // 7 fitted: the next read asks for 7
	EXPECT_EQ(size.next(), 7);
	size.After(7, 0);  // they fit: doubling back
	EXPECT_EQ(size.next(), 14);
	size.After(3, 0);  // fewer than asked (the stream ran dry): unchanged
	EXPECT_EQ(size.next(), 14);
	size.After(14, 0);
	size.After(28, 0);
	EXPECT_EQ(size.next(), 56);
	size.After(56, 0);
	EXPECT_EQ(size.next(), 100);  // never above batch_size
	size.After(1, 0);
	size.After(0, 0);
	EXPECT_EQ(size.next(), 100);
}
