// test/unit/notify_test.cpp
// Insert-notification rules of the core (include/pgmq/core/notify.hpp): the
// throttle decision, the channel name, the interval checks, and the trigger
// DDL with its quoted queue-name argument.
#include "pgmq/core/notify.hpp"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"

#include "core_error_assert.hpp"

namespace {

using pgmq::core::CheckThrottleInterval;
using pgmq::core::CreateNotifyTriggerSql;
using pgmq::core::DropNotifyTriggerSql;
using pgmq::core::ErrorKind;
using pgmq::core::NotifyDue;
using pgmq::core::QuoteLiteral;
using pgmq::core::WriteNotifyChannel;
using pgmq_test::ThrowsCoreError;

constexpr int64_t kSecond = 1000000;

std::string Channel(const std::string &queue, const std::string &operation = "INSERT")
{
	char out[128];
	const std::size_t needed = WriteNotifyChannel(queue, operation, out, sizeof out);
	return needed < sizeof out ? std::string(out, needed) : "(too long: " + std::to_string(needed) + ")";
}

TEST(NotifyDue, IntervalZeroAlwaysNotifies)
{
	EXPECT_TRUE(NotifyDue(0, 0, 0));
	EXPECT_TRUE(NotifyDue(0, 100 * kSecond, 100 * kSecond));
	// Even with a last notification in the future (a clock set back).
	EXPECT_TRUE(NotifyDue(0, 200 * kSecond, 100 * kSecond));
}

TEST(NotifyDue, ThrottledOnceTheIntervalHasPassed)
{
	const int64_t last = 1000 * kSecond;
	EXPECT_FALSE(NotifyDue(250, last, last));
	EXPECT_FALSE(NotifyDue(250, last, last + 249999));
	// Upstream's rule: clock - last >= interval, so exactly the interval is due.
	EXPECT_TRUE(NotifyDue(250, last, last + 250000));
	EXPECT_TRUE(NotifyDue(250, last, last + 3600 * kSecond));
	EXPECT_FALSE(NotifyDue(3600000, last, last + 3599 * kSecond));
	EXPECT_TRUE(NotifyDue(3600000, last, last + 3600 * kSecond));
	// A last notification in the future (clock set back) is not due.
	EXPECT_FALSE(NotifyDue(250, last + kSecond, last));
}

TEST(NotifyDue, TheEpochAndExtremesDoNotOverflow)
{
	// The row starts at to_timestamp(0): 946,684,800 s before PostgreSQL's
	// timestamp origin (2000-01-01), so negative in microseconds.
	const int64_t epoch = -946684800LL * kSecond;
	EXPECT_TRUE(NotifyDue(250, epoch, 0));
	EXPECT_TRUE(NotifyDue(2147483647, INT64_MIN, INT64_MAX));
	EXPECT_FALSE(NotifyDue(2147483647, INT64_MAX, INT64_MIN));
	EXPECT_TRUE(NotifyDue(1, INT64_MIN, 0));
}

TEST(NotifyChannel, QueueNameAsCreated)
{
	EXPECT_EQ(Channel("orders"), "pgmq.q_orders.INSERT");
	// 1.13.1: the name as created, not the lowercased table name.
	EXPECT_EQ(Channel("MyQueue"), "pgmq.q_MyQueue.INSERT");
	EXPECT_EQ(Channel("with space"), "pgmq.q_with space.INSERT");
	EXPECT_EQ(Channel("x", "UPDATE"), "pgmq.q_x.UPDATE");
	EXPECT_EQ(Channel(std::string(47, 'a')), "pgmq.q_" + std::string(47, 'a') + ".INSERT");
}

TEST(NotifyChannel, ReportsTheSizeItNeedsWhenTheBufferIsShort)
{
	char small[8];
	EXPECT_EQ(WriteNotifyChannel("orders", "INSERT", small, sizeof small), std::string("pgmq.q_orders.INSERT").size());
	char exact[21];
	EXPECT_EQ(WriteNotifyChannel("orders", "INSERT", exact, sizeof exact), 20u);
	EXPECT_STREQ(exact, "pgmq.q_orders.INSERT");
}

TEST(ThrottleInterval, NonNegativeWithUpstreamsTwoMessages)
{
	EXPECT_NO_THROW(CheckThrottleInterval(0, false));
	EXPECT_NO_THROW(CheckThrottleInterval(250, true));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckThrottleInterval(-1, false); }, ErrorKind::InvalidParameter,
	                            "throttle_interval_ms must be non-negative"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckThrottleInterval(-1, true); }, ErrorKind::InvalidParameter,
	                            "throttle_interval_ms must be non-negative, got: -1"));
}

TEST(NotifyTrigger, DdlQuotesTheTableAndTheNameArgument)
{
	EXPECT_EQ(DropNotifyTriggerSql("q_orders"), "DROP TRIGGER IF EXISTS trigger_notify_queue_insert_listeners ON pgmq.\"q_orders\"");
	EXPECT_EQ(CreateNotifyTriggerSql("q_myqueue", "MyQueue"),
	          "CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.\"q_myqueue\" "
	          "DEFERRABLE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners('MyQueue')");
	EXPECT_EQ(CreateNotifyTriggerSql("q_a\"b", "a\"b"),
	          "CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.\"q_a\"\"b\" "
	          "DEFERRABLE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners('a\"b')");
}

TEST(QuoteLiteral, DoublesQuotesAndUsesEscapeFormForBackslashes)
{
	EXPECT_EQ(QuoteLiteral("plain"), "'plain'");
	EXPECT_EQ(QuoteLiteral(""), "''");
	EXPECT_EQ(QuoteLiteral("it's"), "'it''s'");
	// Whatever standard_conforming_strings says, E'' reads \\ as one backslash.
	EXPECT_EQ(QuoteLiteral("a\\b"), "E'a\\\\b'");
	EXPECT_EQ(QuoteLiteral("a\\'b"), "E'a\\\\''b'");
	EXPECT_EQ(QuoteLiteral("caf\xC3\xA9"), "'caf\xC3\xA9'");
}

}  // namespace
