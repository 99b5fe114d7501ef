#include <gtest/gtest.h>

#include "pgmq/console/alerts.hpp"

using namespace pgmq::console;

TEST(ConsoleAlerts, QuietQueueFiresNothing)
{
	AlertFigures f;
	f.visible = 3;
	f.oldest_msg_age_sec = 10;
	EXPECT_TRUE(FiringAlerts(f).empty());
}

TEST(ConsoleAlerts, EachAlertAsDocsMonitoringDefinesIt)
{
	AlertFigures f;
	f.visible = 1;
	f.oldest_msg_age_sec = 301;
	EXPECT_EQ(FiringAlerts(f), std::vector<std::string>{"oldest_visible"});
	f.visible = 0;  // the oldest is leased or delayed: nothing waits
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.visible = 1;
	f.paused = true;  // held on purpose
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.paused = false;
	f.dead_letter_queue = true;  // waits for an operator: the dead-letter alert's
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.dead_letter_queue = false;
	f.stream = true;  // kept for its groups, whose alerts are their own
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.stream = false;

	AlertFigures d;
	d.dead_lettered = 1;
	EXPECT_EQ(FiringAlerts(d), std::vector<std::string>{"dead_letters"});
	d.dead_lettered = 0;
	EXPECT_TRUE(FiringAlerts(d).empty());

	AlertFigures p;
	p.default_partition_rows = 2;
	EXPECT_EQ(FiringAlerts(p), std::vector<std::string>{"default_partition"});
}

TEST(ConsoleAlerts, RunwayByMsgIdOnlyBelowWhatMaintenancePremakes)
{
	AlertFigures f;
	f.partition_column = "msg_id";
	f.premake = 4;
	f.partition_interval = 10;
	f.runway_seconds = 30;
	f.runway_messages = 39;
	EXPECT_EQ(FiringAlerts(f), std::vector<std::string>{"runway"});
	f.runway_messages = 40;  // a new queue's first batch
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.runway_messages = 5;
	f.runway_seconds = 601;
	EXPECT_TRUE(FiringAlerts(f).empty());
	f.runway_seconds.reset();  // no rate to measure from
	EXPECT_TRUE(FiringAlerts(f).empty());

	AlertFigures time;
	time.partition_column = "enqueued_at";
	time.runway_seconds = 100;
	EXPECT_EQ(FiringAlerts(time), std::vector<std::string>{"runway"});
}

TEST(ConsoleAlerts, StreamGroupAlertsAsDocsMonitoringDefinesThem)
{
	StreamGroupFigures g;
	g.pending = 5;
	g.idle_seconds = 60;
	g.held_bytes = 1024;
	EXPECT_TRUE(FiringGroupAlerts(g).empty());
	g.idle_seconds = 599;
	EXPECT_TRUE(FiringGroupAlerts(g).empty());
	g.idle_seconds = 601;  // messages wait and no read for over 10 minutes
	EXPECT_EQ(FiringGroupAlerts(g), std::vector<std::string>{"stopped_reading"});
	g.pending = 0;  // caught up: idle is fine
	EXPECT_TRUE(FiringGroupAlerts(g).empty());
	g.idle_seconds.reset();
	g.pending = 3;
	EXPECT_TRUE(FiringGroupAlerts(g).empty());
	g.held_bytes = kGroupHeldBytesAlert + 1;
	EXPECT_EQ(FiringGroupAlerts(g), std::vector<std::string>{"holds_storage"});
	g.idle_seconds = 3600;
	EXPECT_EQ(FiringGroupAlerts(g), (std::vector<std::string>{"stopped_reading", "holds_storage"}));
}
