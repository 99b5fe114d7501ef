// relay/test/confirms_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/confirms.hpp"

using namespace pgmq::relay;

namespace {

void PublishFive(ConfirmTracker &t, std::uint64_t first)
{
	t.Start(first);
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(t.Published("q:" + std::to_string(i)), first + i);
}

}  // namespace

TEST(RelayConfirms, SingleAcks)
{
	ConfirmTracker t;
	PublishFive(t, 1);
	EXPECT_EQ(t.pending(), 5u);
	for (std::uint64_t tag = 1; tag <= 5; tag++)
		t.Ack(tag, false);
	EXPECT_TRUE(t.Done());
	for (std::size_t i = 0; i < 5; i++)
		EXPECT_EQ(t.outcome(i), Outcome::Confirmed);
}

TEST(RelayConfirms, MultipleAckAndNack)
{
	ConfirmTracker t;
	PublishFive(t, 11);  // a second batch on the same channel
	t.Ack(13, true);     // 11, 12, 13
	EXPECT_EQ(t.pending(), 2u);
	t.Nack(15, true);  // 14, 15; 11..13 keep their ack
	EXPECT_TRUE(t.Done());
	EXPECT_EQ(t.outcome(0), Outcome::Confirmed);
	EXPECT_EQ(t.outcome(2), Outcome::Confirmed);
	EXPECT_EQ(t.outcome(3), Outcome::Nacked);
	EXPECT_EQ(t.outcome(4), Outcome::Nacked);
}

TEST(RelayConfirms, ReturnedIsNotConfirmedEvenWhenAcked)
{
	// mandatory + unroutable: basic.return, then basic.ack for the same message.
	ConfirmTracker t;
	PublishFive(t, 1);
	t.Returned("q:2");
	t.Ack(5, true);
	EXPECT_TRUE(t.Done());
	EXPECT_EQ(t.outcome(1), Outcome::Confirmed);
	EXPECT_EQ(t.outcome(2), Outcome::Returned);
}

TEST(RelayConfirms, UnansweredStayPending)
{
	ConfirmTracker t;
	PublishFive(t, 1);
	t.Ack(2, true);
	EXPECT_FALSE(t.Done());
	EXPECT_EQ(t.outcome(2), Outcome::Pending);
	EXPECT_EQ(t.outcome(4), Outcome::Pending);
}

TEST(RelayConfirms, ForeignTagsAndIdsIgnored)
{
	ConfirmTracker t;
	PublishFive(t, 6);
	t.Ack(3, false);   // an earlier batch's
	t.Ack(99, false);  // never published
	t.Returned("other:1");
	EXPECT_EQ(t.pending(), 5u);
	t.Ack(0, true);  // multiple with tag 0: everything outstanding
	EXPECT_TRUE(t.Done());
	EXPECT_EQ(t.outcome(4), Outcome::Confirmed);
}

TEST(RelayConfirms, DoubleAnswerCountsOnce)
{
	ConfirmTracker t;
	PublishFive(t, 1);
	t.Ack(1, false);
	t.Nack(1, false);
	EXPECT_EQ(t.pending(), 4u);
	EXPECT_EQ(t.outcome(0), Outcome::Confirmed);
}

TEST(RelayConfirms, ClassifyABatch)
{
	// Seven messages read; a lost connection stopped publishing after five.
	ConfirmTracker t;
	PublishFive(t, 1);
	t.Returned("q:1");
	t.Ack(2, true);   // 1, 2 (2 was returned: not confirmed)
	t.Nack(3, false);
	t.Ack(4, false);  // 5 never answered
	BatchOutcome o = Classify(t, 7);
	EXPECT_EQ(o.confirmed, (std::vector<std::size_t>{0, 3}));
	EXPECT_EQ(o.not_confirmed, (std::vector<std::size_t>{1, 2, 4, 5, 6}));
	EXPECT_EQ(o.returned, 1u);
	EXPECT_EQ(o.nacked, 1u);
	EXPECT_EQ(o.unanswered, 3u);
}
