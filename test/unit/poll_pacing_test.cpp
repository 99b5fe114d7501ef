// test/unit/poll_pacing_test.cpp
// core::PollPacer: when a *_with_poll waiter reads again.
#include "pgmq/core/poll_pacing.hpp"

#include <gtest/gtest.h>

namespace {

using pgmq::core::AfterEmptyRead;
using pgmq::core::MakePollSchedule;
using pgmq::core::NextPollStep;
using pgmq::core::NoteWoken;
using pgmq::core::PollPacer;

constexpr int64_t kMs = 1000;
constexpr int64_t kStart = 800'000'000'000'000;  // a clock reading, in microseconds

// A poll of max_poll_seconds with interval_ms, its first read at kStart done.
PollPacer Started(int32_t max_poll_seconds, int32_t interval_ms)
{
	PollPacer pacer;
	pacer.schedule = MakePollSchedule(kStart, max_poll_seconds, interval_ms);
	AfterEmptyRead(pacer, kStart);
	return pacer;
}

TEST(PollPacer, UnwokenReadsEveryIntervalThenAtTheDeadline)
{
	PollPacer pacer = Started(1, 300);
	EXPECT_EQ(NextPollStep(pacer, kStart), 300);
	EXPECT_EQ(NextPollStep(pacer, kStart + 100 * kMs), 200);
	EXPECT_EQ(NextPollStep(pacer, kStart + 300 * kMs), 0);
	AfterEmptyRead(pacer, kStart + 900 * kMs);
	EXPECT_EQ(NextPollStep(pacer, kStart + 900 * kMs), 100);  // the deadline, not the interval
	AfterEmptyRead(pacer, kStart + 1000 * kMs);
	EXPECT_EQ(NextPollStep(pacer, kStart + 1000 * kMs), -1);
}

TEST(PollPacer, WaitsAreRoundedUpNeverEarly)
{
	PollPacer pacer = Started(5, 100);
	EXPECT_EQ(NextPollStep(pacer, kStart + 1), 100);
}

TEST(PollPacer, NoPollTimeGivesUpAfterTheFirstRead)
{
	EXPECT_EQ(NextPollStep(Started(0, 100), kStart), -1);
	EXPECT_EQ(NextPollStep(Started(-3, 100), kStart), -1);
}

TEST(PollPacer, FirstWakeUpReadsAtOnce)
{
	PollPacer pacer = Started(10, 60000);
	NoteWoken(pacer);
	EXPECT_EQ(NextPollStep(pacer, kStart + 5 * kMs), 0);
}

TEST(PollPacer, AfterAFruitlessWakeUpHoldsOffForAnInterval)
{
	PollPacer pacer = Started(10, 1000);
	NoteWoken(pacer);
	AfterEmptyRead(pacer, kStart + 100 * kMs);  // woken, found nothing
	NoteWoken(pacer);                           // another send it cannot use
	EXPECT_EQ(NextPollStep(pacer, kStart + 200 * kMs), 900);
	EXPECT_EQ(NextPollStep(pacer, kStart + 1100 * kMs), 0);
}

TEST(PollPacer, KeepsThePaceWhileWakeUpsContinue)
{
	PollPacer pacer = Started(10, 1000);
	NoteWoken(pacer);
	AfterEmptyRead(pacer, kStart + 100 * kMs);
	NoteWoken(pacer);
	AfterEmptyRead(pacer, kStart + 1100 * kMs);  // read at the interval, woken meanwhile
	NoteWoken(pacer);
	EXPECT_EQ(NextPollStep(pacer, kStart + 1200 * kMs), 900);
}

TEST(PollPacer, AQuietIntervalEndsTheHoldingOff)
{
	PollPacer pacer = Started(10, 1000);
	NoteWoken(pacer);
	AfterEmptyRead(pacer, kStart + 100 * kMs);
	AfterEmptyRead(pacer, kStart + 1100 * kMs);  // not woken in between
	NoteWoken(pacer);
	EXPECT_EQ(NextPollStep(pacer, kStart + 1200 * kMs), 0);
}

TEST(PollPacer, HoldingOffNeverPassesTheDeadline)
{
	PollPacer pacer = Started(1, 60000);
	NoteWoken(pacer);
	AfterEmptyRead(pacer, kStart + 100 * kMs);
	NoteWoken(pacer);
	EXPECT_EQ(NextPollStep(pacer, kStart + 200 * kMs), 800);
}

}  // namespace
