// test/unit/arguments_test.cpp
// Argument rules: qty, send_batch arrays (API.md §2.3) and the
// read_with_poll schedule (API.md §2.4).
#include "pgmq/core/arguments.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core_error_assert.hpp"
#include "pgmq/core/error.hpp"

namespace {

using pgmq::core::CheckBatch;
using pgmq::core::CheckQuantity;
using pgmq::core::ErrorKind;
using pgmq::core::MakePollSchedule;
using pgmq::core::NextPollWaitMs;
using pgmq::core::PollSchedule;
using pgmq_test::ThrowsCoreError;

constexpr int64_t kSecond = 1000000;  // microseconds
constexpr int64_t kMs = 1000;
// A realistic TimestampTz: microseconds since 2000-01-01, around 2025.
constexpr int64_t kNow = INT64_C(800000000) * kSecond;

// ---------------------------------------------------------------------------
// CheckQuantity

TEST(CheckQuantity, AcceptsZeroAndPositive)
{
	EXPECT_NO_THROW(CheckQuantity(0));
	EXPECT_NO_THROW(CheckQuantity(1));
	EXPECT_NO_THROW(CheckQuantity(std::numeric_limits<int32_t>::max()));
	EXPECT_NO_THROW(CheckQuantity(std::numeric_limits<int64_t>::max()));
}

TEST(CheckQuantity, RejectsNegativeAsInvalidParameter)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckQuantity(-1); }, ErrorKind::InvalidParameter,
	                            "qty must be non-negative, got: -1"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckQuantity(std::numeric_limits<int32_t>::min()); },
	                            ErrorKind::InvalidParameter, "qty must be non-negative, got: -2147483648"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckQuantity(std::numeric_limits<int64_t>::min()); },
	                            ErrorKind::InvalidParameter, "qty must be non-negative, got: -9223372036854775808"));
}

// ---------------------------------------------------------------------------
// CheckBatch(msgs_null, msgs_count, headers_null, headers_count)

TEST(CheckBatch, NullMsgsIsANullArgument)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(true, 0, true, 0); }, ErrorKind::NullArgument,
	                            "msgs cannot be NULL or empty"));
	// msgs is checked before headers.
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(true, 0, false, 3); }, ErrorKind::NullArgument,
	                            "msgs cannot be NULL or empty"));
}

TEST(CheckBatch, EmptyMsgsIsAnInvalidParameter)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 0, true, 0); }, ErrorKind::InvalidParameter,
	                            "msgs cannot be NULL or empty"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 0, false, 0); }, ErrorKind::InvalidParameter,
	                            "msgs cannot be NULL or empty"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 0, false, 2); }, ErrorKind::InvalidParameter,
	                            "msgs cannot be NULL or empty"));
}

TEST(CheckBatch, NullHeadersAreFineForAnyNonEmptyBatch)
{
	EXPECT_NO_THROW(CheckBatch(false, 1, true, 0));
	EXPECT_NO_THROW(CheckBatch(false, 1000, true, 0));
	// The count of a NULL array means nothing.
	EXPECT_NO_THROW(CheckBatch(false, 3, true, 7));
}

TEST(CheckBatch, HeadersOfTheSameLengthAreFine)
{
	EXPECT_NO_THROW(CheckBatch(false, 1, false, 1));
	EXPECT_NO_THROW(CheckBatch(false, 5, false, 5));
}

TEST(CheckBatch, MismatchedHeadersNameBothLengths)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 3, false, 2); }, ErrorKind::InvalidParameter,
	                            "headers array length (2) must match msgs array length (3)"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 2, false, 5); }, ErrorKind::InvalidParameter,
	                            "headers array length (5) must match msgs array length (2)"));
	// An empty headers array with non-empty msgs also fails (upstream 1.11).
	EXPECT_TRUE(ThrowsCoreError([] { CheckBatch(false, 1, false, 0); }, ErrorKind::InvalidParameter,
	                            "headers array length (0) must match msgs array length (1)"));
}

// ---------------------------------------------------------------------------
// MakePollSchedule

TEST(MakePollSchedule, DeadlineIsNowPlusMaxPollSeconds)
{
	const PollSchedule s = MakePollSchedule(kNow, 5, 100);
	EXPECT_EQ(s.deadline_us, kNow + 5 * kSecond);
	EXPECT_EQ(s.interval_us, 100 * kMs);
	EXPECT_EQ(MakePollSchedule(0, 1, 250).deadline_us, kSecond);
	EXPECT_EQ(MakePollSchedule(-7, 2, 1).deadline_us, -7 + 2 * kSecond);
}

TEST(MakePollSchedule, NonPositiveMaxPollSecondsMeansTheDeadlineIsNow)
{
	EXPECT_EQ(MakePollSchedule(kNow, 0, 100).deadline_us, kNow);
	EXPECT_EQ(MakePollSchedule(kNow, -1, 100).deadline_us, kNow);
	EXPECT_EQ(MakePollSchedule(kNow, std::numeric_limits<int32_t>::min(), 100).deadline_us, kNow);
}

TEST(MakePollSchedule, IntervalIsAtLeastOneMillisecond)
{
	// A 0 interval would busy-loop (upstream #342).
	EXPECT_EQ(MakePollSchedule(kNow, 5, 0).interval_us, kMs);
	EXPECT_EQ(MakePollSchedule(kNow, 5, 1).interval_us, kMs);
	EXPECT_EQ(MakePollSchedule(kNow, 5, 2).interval_us, 2 * kMs);
}

TEST(MakePollSchedule, LargeValuesDoNotOverflow)
{
	const int32_t max = std::numeric_limits<int32_t>::max();
	const PollSchedule s = MakePollSchedule(kNow, max, max);
	EXPECT_EQ(s.deadline_us, kNow + static_cast<int64_t>(max) * kSecond);
	EXPECT_EQ(s.interval_us, static_cast<int64_t>(max) * kMs);
	EXPECT_GT(s.deadline_us, kNow);
	EXPECT_GT(s.interval_us, 0);
}

TEST(MakePollSchedule, NegativeIntervalIsAnInvalidParameter)
{
	EXPECT_TRUE(ThrowsCoreError([] { MakePollSchedule(kNow, 5, -1); }, ErrorKind::InvalidParameter,
	                            "poll_interval_ms must be non-negative, got: -1"));
	EXPECT_TRUE(ThrowsCoreError([] { MakePollSchedule(kNow, 0, std::numeric_limits<int32_t>::min()); },
	                            ErrorKind::InvalidParameter, "poll_interval_ms must be non-negative, got: -2147483648"));
}

// ---------------------------------------------------------------------------
// NextPollWaitMs

TEST(NextPollWaitMs, WaitsOneIntervalWhenTheDeadlineIsFar)
{
	const PollSchedule s = MakePollSchedule(kNow, 5, 100);
	EXPECT_EQ(NextPollWaitMs(s, kNow), 100);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 2 * kSecond), 100);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 5 * kSecond - 100 * kMs), 100);
}

TEST(NextPollWaitMs, WaitsOnlyUntilTheDeadlineWhenItIsNear)
{
	const PollSchedule s = MakePollSchedule(kNow, 5, 100);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 5 * kSecond - 40 * kMs), 40);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 5 * kSecond - 1 * kMs), 1);
}

TEST(NextPollWaitMs, RoundsUpSoItNeverWakesBeforeTheDeadline)
{
	const PollSchedule s = MakePollSchedule(kNow, 1, 1000);
	EXPECT_EQ(NextPollWaitMs(s, kNow + kSecond - 1), 1);           // 1 us left
	EXPECT_EQ(NextPollWaitMs(s, kNow + kSecond - 999), 1);         // 999 us
	EXPECT_EQ(NextPollWaitMs(s, kNow + kSecond - 1000), 1);        // 1000 us
	EXPECT_EQ(NextPollWaitMs(s, kNow + kSecond - 1001), 2);        // 1001 us
	EXPECT_EQ(NextPollWaitMs(s, kNow + kSecond - 40 * kMs - 1), 41);
}

TEST(NextPollWaitMs, MinusOneAtOrPastTheDeadline)
{
	const PollSchedule s = MakePollSchedule(kNow, 5, 100);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 5 * kSecond), -1);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 5 * kSecond + 1), -1);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 60 * kSecond), -1);
}

TEST(NextPollWaitMs, ZeroMaxPollSecondsNeverWaits)
{
	EXPECT_EQ(NextPollWaitMs(MakePollSchedule(kNow, 0, 100), kNow), -1);
	EXPECT_EQ(NextPollWaitMs(MakePollSchedule(kNow, -3, 100), kNow), -1);
}

TEST(NextPollWaitMs, ZeroIntervalWaitsOneMillisecond)
{
	const PollSchedule s = MakePollSchedule(kNow, 5, 0);
	EXPECT_EQ(NextPollWaitMs(s, kNow), 1);
	EXPECT_EQ(NextPollWaitMs(s, kNow + 4 * kSecond), 1);
}

TEST(NextPollWaitMs, AFullPollEndsAtTheDeadlineWithoutBusyLooping)
{
	// Simulate read_with_poll against a clock that only moves by our waits.
	for (const int32_t interval_ms : {0, 1, 7, 100, 333, 1000, 5000}) {
		const PollSchedule s = MakePollSchedule(kNow, 2, interval_ms);
		int64_t now = kNow + 123;  // started a little late
		int waits = 0;
		for (;;) {
			const long wait = NextPollWaitMs(s, now);
			if (wait < 0)
				break;
			ASSERT_GE(wait, 1) << "interval " << interval_ms;
			ASSERT_LE(wait, std::max<int32_t>(interval_ms, 1)) << "interval " << interval_ms;
			now += wait * kMs;
			ASSERT_LT(++waits, 100000) << "interval " << interval_ms;
		}
		EXPECT_GE(now, s.deadline_us) << "interval " << interval_ms;
		EXPECT_LT(now, s.deadline_us + kMs) << "overslept, interval " << interval_ms;
		// At most one wait per millisecond, however small the interval.
		EXPECT_LE(waits, 2000) << "interval " << interval_ms;
	}
}

}  // namespace
