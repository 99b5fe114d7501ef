// relay/test/metrics_test.cpp
#include <gtest/gtest.h>

#include "pgmq/relay/metrics.hpp"

using namespace pgmq::relay;

TEST(RelayMetrics, EscapesLabelValues)
{
	EXPECT_EQ(EscapeLabelValue("plain"), "plain");
	EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(RelayMetrics, PrometheusText)
{
	QueueCounters counters("orders");
	counters.relayed = 7;
	counters.confirms_pending = 3;
	counters.lag_seconds = 12;
	counters.broker_up = true;
	std::string text = FormatPrometheus({counters.Snapshot()});
	EXPECT_NE(text.find("# TYPE pgmq_relay_relayed_total counter\npgmq_relay_relayed_total{queue=\"orders\"} 7\n"),
			  std::string::npos);
	EXPECT_NE(text.find("pgmq_relay_confirms_pending{queue=\"orders\"} 3\n"), std::string::npos);
	EXPECT_NE(text.find("pgmq_relay_lag_seconds{queue=\"orders\"} 12\n"), std::string::npos);
	EXPECT_NE(text.find("pgmq_relay_broker_up{queue=\"orders\"} 1\n"), std::string::npos);
	EXPECT_NE(text.find("pgmq_relay_postgres_up{queue=\"orders\"} 0\n"), std::string::npos);
	EXPECT_NE(text.find("pgmq_relay_queue_length{queue=\"orders\"} -1\n"), std::string::npos);
	for (const char *family : {"pgmq_relay_refused_total", "pgmq_relay_dead_lettered_total",
							   "pgmq_relay_timeouts_total", "pgmq_relay_broker_blocked"})
		EXPECT_NE(text.find(std::string(family) + "{queue=\"orders\"} 0\n"), std::string::npos) << family;
	// Every sample line belongs to a family announced by HELP and TYPE.
	std::size_t help = 0, type = 0, samples = 0, start = 0;
	while (start < text.size()) {
		std::size_t end = text.find('\n', start);
		std::string line = text.substr(start, end - start);
		help += line.rfind("# HELP ", 0) == 0;
		type += line.rfind("# TYPE ", 0) == 0;
		samples += line[0] != '#';
		start = end + 1;
	}
	EXPECT_EQ(help, type);
	EXPECT_EQ(samples, type);  // one queue: one sample per family
}

TEST(RelayMetrics, ReportLine)
{
	QueueSnapshot before, after;
	before.queue = after.queue = "orders";
	before.relayed = 10;
	after.relayed = 25;
	after.confirms_pending = 2;
	after.lag_seconds = 4;
	after.queue_length = 9;
	after.returned = 1;
	after.postgres_up = true;
	EXPECT_EQ(FormatReportLine(before, after),
			  "queue orders: relayed 25 (+15), confirms pending 2, lag 4 s, length 9, returned +1, broker down");
	after.lag_seconds = -1;
	after.queue_length = -1;
	after.returned = 0;
	after.broker_up = true;
	EXPECT_EQ(FormatReportLine(before, after), "queue orders: relayed 25 (+15), confirms pending 2, lag ?, length ?");
	QueueSnapshot stream_after = after;
	stream_after.source = "stream orders, group rabbitmq";
	EXPECT_EQ(FormatReportLine(before, stream_after),
			  "stream orders, group rabbitmq: relayed 25 (+15), confirms pending 2, lag ?, length ?");
	after.refused = 2;
	after.timeouts = 1;
	after.broker_blocked = true;
	EXPECT_EQ(FormatReportLine(before, after), "queue orders: relayed 25 (+15), confirms pending 2, lag ?, length ?, "
											   "refused +2, timeouts +1, broker blocked");
}
