#include <gtest/gtest.h>

#include "pgmq/console/rate_history.hpp"

using namespace pgmq::console;

TEST(RateHistory, RatesAreIncreasesOverElapsedTime)
{
	RateHistory h(10);
	h.Record(0, {{"jobs", 1, 100, 50}});
	EXPECT_TRUE(h.SendRates("jobs", 0).empty());
	h.Record(10, {{"jobs", 1, 200, 70}});
	h.Record(20, {{"jobs", 1, 200, 170}});
	EXPECT_EQ(h.SendRates("jobs", 0), (std::vector<double>{10, 0}));
	EXPECT_EQ(h.ReadRates("jobs", 0), (std::vector<double>{2, 10}));
	EXPECT_TRUE(h.SendRates("other", 0).empty());
}

TEST(RateHistory, KeepsTheLastPointsOnly)
{
	RateHistory h(2);
	for (int i = 0; i <= 4; ++i)
		h.Record(i, {{"jobs", 1, i * i, 0}});
	EXPECT_EQ(h.SendRates("jobs", 0), (std::vector<double>{5, 7}));
}

TEST(RateHistory, StartsOverWhenTheQueueIsNewOrCountersFell)
{
	RateHistory h(10);
	h.Record(0, {{"jobs", 1, 100, 0}});
	h.Record(1, {{"jobs", 1, 110, 0}});
	h.Record(2, {{"jobs", 2, 5, 0}});  // dropped and made again
	EXPECT_TRUE(h.SendRates("jobs", 0).empty());
	h.Record(3, {{"jobs", 2, 6, 0}});
	h.Record(4, {{"jobs", 2, 0, 0}});  // statistics reset
	EXPECT_TRUE(h.SendRates("jobs", 0).empty());
	h.Record(5, {});  // dropped
	h.Record(6, {{"jobs", 2, 10, 0}});
	EXPECT_TRUE(h.SendRates("jobs", 0).empty());
}

TEST(RateHistory, DownsamplesToAveragesEndingAtTheNewest)
{
	RateHistory h(100);
	for (int i = 0; i <= 7; ++i)
		h.Record(i, {{"jobs", 1, i * (i + 1) / 2, 0}});  // rates 1, 2, ..., 7
	EXPECT_EQ(h.SendRates("jobs", 10), (std::vector<double>{1, 2, 3, 4, 5, 6, 7}));
	EXPECT_EQ(h.SendRates("jobs", 3), (std::vector<double>{1, 3, 6}));  // 1 | 2 3 4 | 5 6 7
	EXPECT_EQ(h.SendRates("jobs", 4), (std::vector<double>{1, 2.5, 4.5, 6.5}));
}
