// src/pg/module.cpp
// Library entry: the module magic block and _PG_init.
#include "pgmq/pg/plan_cache.hpp"  // includes core headers: before any postgres.h
#include "pgmq/pg/group_row.hpp"
#include "pgmq/pg/head_hint.hpp"
#include "pgmq/pg/maintenance_worker.hpp"
#include "pgmq/pg/notify_throttle.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/table_trust.hpp"
#include "pgmq/pg/wakeup.hpp"

extern "C" {
PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);
}

void _PG_init(void)
{
	pgmq::pg::InitPlanCache();
	pgmq::pg::InitPolicyCache();
	pgmq::pg::InitTableTrust();
	pgmq::pg::InitWakeup();
	pgmq::pg::InitHeadHints();
	pgmq::pg::InitGroupRowHints();
	pgmq::pg::InitNotifyThrottle();
	pgmq::pg::InitMaintenance();
}
