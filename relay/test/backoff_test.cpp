// relay/test/backoff_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/backoff.hpp"

using pgmq::relay::Backoff;

TEST(RelayBackoff, DoublesUpToTheCap)
{
	Backoff b(100, 1000);
	// random 1.0: the top of each window
	EXPECT_EQ(b.NextDelayMs(1.0), 100);
	EXPECT_EQ(b.NextDelayMs(1.0), 200);
	EXPECT_EQ(b.NextDelayMs(1.0), 400);
	EXPECT_EQ(b.NextDelayMs(1.0), 800);
	EXPECT_EQ(b.NextDelayMs(1.0), 1000);
	for (int i = 0; i < 2000; i++)
		EXPECT_LE(b.NextDelayMs(1.0), 1000);
}

TEST(RelayBackoff, JitterStaysInTheUpperHalf)
{
	Backoff b(100, 1000);
	EXPECT_EQ(b.NextDelayMs(0.0), 50);
	EXPECT_EQ(b.NextDelayMs(0.5), 150);
	EXPECT_EQ(b.NextDelayMs(-3), 200);  // clamped
}

TEST(RelayBackoff, ResetStartsOver)
{
	Backoff b(100, 10000);
	for (int i = 0; i < 5; i++)
		b.NextDelayMs(1.0);
	b.Reset();
	EXPECT_EQ(b.attempts(), 0);
	EXPECT_EQ(b.NextDelayMs(1.0), 100);
}
