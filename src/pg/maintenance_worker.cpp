// src/pg/maintenance_worker.cpp
// The pgmq maintenance background worker (see maintenance_worker.hpp).
//
// A launcher, registered at postmaster start, wakes every
// pgmq.maintenance_interval seconds and, for each database listed in
// pgmq.maintenance_database, starts a short-lived worker connected to it and
// waits for it to finish. The worker maintains every partitioned queue of its
// database table by table, each table in a transaction of its own, exactly
// as CALL pgmq.run_partition_maintenance() does: one overrun queue produces a
// WARNING in the server log, and every other queue keeps its partitions and
// its retention. (pg_partman's own worker runs all tables in one transaction
// and then maintains none.)
//
// A database that cannot be reached (dropped, not yet created, no free
// worker slot) costs that database one run: the worker fails with the
// reason in the log, and the launcher carries on with the next database.
// A database without pgmq or pg_partman is skipped quietly. All three
// settings take effect on reload.
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/maintenance_worker.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/policy_maintenance.hpp"

extern "C" {
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

PGDLLEXPORT void pgmq_maintenance_launcher_main(Datum argument);
PGDLLEXPORT void pgmq_maintenance_worker_main(Datum argument);
}

namespace pgmq::pg {

namespace {

// Settings (GUCs): plain C storage, as guc.c expects.
int maintenance_interval = 0;             // seconds; 0: off
char *maintenance_database = nullptr;     // comma-separated database names
char *maintenance_role = nullptr;         // role the workers connect as; empty: bootstrap superuser
bool launcher_registered = false;         // preloaded: backends inherit it from the postmaster
bool maintenance_warning = true;          // pgmq.partition_maintenance_warning

// Whether a comma-separated list setting names the database.
bool ListNames(const char *list, const char *database)
{
	if (list == nullptr || list[0] == '\0' || database == nullptr)
		return false;
	char *list_text = pstrdup(list);
	List *names = NIL;
	bool found = false;
	if (SplitGUCList(list_text, ',', &names)) {
		ListCell *cell;
		foreach (cell, names)
			found = found || strcmp(static_cast<const char *>(lfirst(cell)), database) == 0;
	}
	list_free(names);
	pfree(list_text);
	return found;
}

// What the launcher hands a worker in bgw_extra.
struct WorkerTarget {
	char database[NAMEDATALEN];
	char role[NAMEDATALEN];
};
static_assert(sizeof(WorkerTarget) <= BGW_EXTRALEN, "bgw_extra holds the worker's target");

// Starts the worker for one database and waits until it has finished.
void MaintainDatabase(const char *database)
{
	WorkerTarget target;
	memset(&target, 0, sizeof target);
	if (strlen(database) >= sizeof target.database || strlen(maintenance_role) >= sizeof target.role) {
		ereport(WARNING, (errmsg("pgmq maintenance: database or role name too long: \"%s\"", database)));
		return;
	}
	strlcpy(target.database, database, sizeof target.database);
	strlcpy(target.role, maintenance_role, sizeof target.role);

	BackgroundWorker worker;
	memset(&worker, 0, sizeof worker);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "pgmq", sizeof worker.bgw_library_name);
	strlcpy(worker.bgw_function_name, "pgmq_maintenance_worker_main", sizeof worker.bgw_function_name);
	snprintf(worker.bgw_name, sizeof worker.bgw_name, "pgmq maintenance of database %s", database);
	strlcpy(worker.bgw_type, "pgmq maintenance", sizeof worker.bgw_type);
	worker.bgw_notify_pid = MyProcPid;
	memcpy(worker.bgw_extra, &target, sizeof target);

	BackgroundWorkerHandle *handle = nullptr;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle)) {
		ereport(WARNING, (errmsg("pgmq maintenance: could not start a worker for database \"%s\"", database),
		                  errhint("Raise max_worker_processes; this database is tried again next interval.")));
		return;
	}
	if (WaitForBackgroundWorkerShutdown(handle) == BGWH_POSTMASTER_DIED)
		proc_exit(1);
	pfree(handle);
}

// One run over the listed databases, in order.
void MaintainDatabases()
{
	char *list_text = pstrdup(maintenance_database);
	List *databases = NIL;
	if (!SplitGUCList(list_text, ',', &databases)) {
		ereport(WARNING, (errmsg("pgmq maintenance: invalid list in pgmq.maintenance_database: \"%s\"",
		                         maintenance_database)));
	} else {
		ListCell *cell;
		foreach (cell, databases) {
			CHECK_FOR_INTERRUPTS();
			if (ConfigReloadPending || ShutdownRequestPending)
				break;  // the list may have changed: start over with the new one
			MaintainDatabase(static_cast<const char *>(lfirst(cell)));
		}
	}
	list_free(databases);
	pfree(list_text);
}

// The postmaster tells the launcher with SIGUSR1 that a worker it started
// has exited; PostgreSQL 15 ignores SIGUSR1 in workers without a database
// connection, so without this the launcher would wait forever.
void WorkerExited(SIGNAL_ARGS)
{
	const int saved_errno = errno;
	SetLatch(MyLatch);
	errno = saved_errno;
}

bool Enabled() { return maintenance_interval > 0 && maintenance_database != nullptr && maintenance_database[0] != '\0'; }

}  // namespace

void InitMaintenance()
{
	DefineCustomIntVariable("pgmq.maintenance_interval",
	                        "Seconds between two partition maintenance runs of the pgmq background worker.",
	                        "0 turns the worker off. Needs pgmq in shared_preload_libraries.", &maintenance_interval, 0,
	                        0, INT_MAX / 1000, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
	DefineCustomStringVariable("pgmq.maintenance_database",
	                           "Databases whose partitioned queues the pgmq background worker maintains.",
	                           "A comma-separated list of database names.", &maintenance_database, "", PGC_SIGHUP,
	                           GUC_LIST_INPUT, nullptr, nullptr, nullptr);
	DefineCustomBoolVariable("pgmq.partition_maintenance_warning",
	                         "Warn when a partitioned queue is created where no background worker maintains it.",
	                         "Turn off where partitions are maintained otherwise (pg_cron calling "
	                         "pgmq.run_partition_maintenance()).",
	                         &maintenance_warning, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
	DefineCustomStringVariable("pgmq.maintenance_role", "Role the pgmq maintenance worker connects as.",
	                           "Empty: the bootstrap superuser. Partitions it creates belong to this role.",
	                           &maintenance_role, "", PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	if (!process_shared_preload_libraries_in_progress)
		return;
	BackgroundWorker launcher;
	memset(&launcher, 0, sizeof launcher);
	launcher.bgw_flags = BGWORKER_SHMEM_ACCESS;
	launcher.bgw_start_time = BgWorkerStart_RecoveryFinished;
	launcher.bgw_restart_time = 10;
	strlcpy(launcher.bgw_library_name, "pgmq", sizeof launcher.bgw_library_name);
	strlcpy(launcher.bgw_function_name, "pgmq_maintenance_launcher_main", sizeof launcher.bgw_function_name);
	strlcpy(launcher.bgw_name, "pgmq maintenance launcher", sizeof launcher.bgw_name);
	strlcpy(launcher.bgw_type, "pgmq maintenance launcher", sizeof launcher.bgw_type);
	RegisterBackgroundWorker(&launcher);
	launcher_registered = true;
}

bool PartitionsMaintainedHere()
{
	if (!maintenance_warning)
		return true;  // the user says they are
	const char *database = get_database_name(MyDatabaseId);
	if (launcher_registered && maintenance_interval > 0 && ListNames(maintenance_database, database))
		return true;
	// pg_partman's own worker, when it runs in this database.
	return ListNames(GetConfigOption("pg_partman_bgw.dbname", true, false), database);
}

}  // namespace pgmq::pg

using namespace pgmq::pg;

// The launcher: sleeps on its latch until the next run is due (or forever
// while the worker is off); a reload wakes it, so new settings apply at once.
void pgmq_maintenance_launcher_main(Datum)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	// It runs no SQL itself: on SIGTERM it just leaves its loop, quietly.
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGUSR1, WorkerExited);
	BackgroundWorkerUnblockSignals();
	TimestampTz last_run = 0;
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
			proc_exit(0);
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		long timeout_ms = -1;
		if (Enabled()) {
			const TimestampTz next_run = last_run + static_cast<int64>(maintenance_interval) * USECS_PER_SEC;
			TimestampTz now = GetCurrentTimestamp();
			if (now >= next_run) {
				last_run = now;
				MaintainDatabases();
				now = GetCurrentTimestamp();
			}
			// Runs start every interval, however long one takes.
			timeout_ms = Max(TimestampDifferenceMilliseconds(now, last_run + static_cast<int64>(maintenance_interval) *
			                                                                         USECS_PER_SEC),
			                 1L);
			if (ConfigReloadPending)
				continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | (timeout_ms >= 0 ? WL_TIMEOUT : 0), timeout_ms,
		                 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

// A worker: one maintenance pass over its database, then exit.
void pgmq_maintenance_worker_main(Datum)
{
	WorkerTarget target;
	memcpy(&target, MyBgworkerEntry->bgw_extra, sizeof target);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(target.database, target.role[0] ? target.role : nullptr, 0);
	pgstat_report_appname("pgmq maintenance");

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SpiConnect();
	pgstat_report_activity(STATE_RUNNING, "pgmq partition maintenance");
	// No wait of one table (for pg_partman's maintenance lock, or a lock on
	// a queue held by a long transaction) may hold up the other tables and
	// databases for long: it fails that table's step instead, with a WARNING.
	SetConfigOption("lock_timeout", "60s", PGC_USERSET, PGC_S_SESSION);
	const int rc = SPI_execute("SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'pgmq'", false, 1);
	const bool has_pgmq = rc == SPI_OK_SELECT && SPI_processed == 1;
	Partman partman;
	partman.installed = false;
	if (has_pgmq)
		FindPartman(&partman);
	MaintenanceTally tally{};
	MemoryContext keep = AllocSetContextCreate(TopMemoryContext, "pgmq maintenance", ALLOCSET_DEFAULT_SIZES);
	int64 policy_deleted = 0;
	// Retention and deduplication expiry (delivery policies) need no pg_partman.
	// Nor do streams' partitions.
	int64 stream_partitions_made = 0, stream_partitions_reclaimed = 0;
	if (has_pgmq) {
		MaintainPolicies(nullptr, keep, Commits::Worker, &policy_deleted);
		MaintainStreams(nullptr, keep, Commits::Worker, &stream_partitions_made, &stream_partitions_reclaimed);
	}
	if (has_pgmq && partman.installed) {
		MaintainedTables list;
		ListMaintainedTables(partman, nullptr, keep, &list);
		MaintainTables(partman, &list, Commits::Worker, &tally);
	}
	SpiFinish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, nullptr);
	if (stream_partitions_made > 0 || stream_partitions_reclaimed > 0)
		ereport(DEBUG1, (errmsg("pgmq maintenance of database \"%s\": streams: %lld partitions made, %lld reclaimed",
		                        target.database, static_cast<long long>(stream_partitions_made),
		                        static_cast<long long>(stream_partitions_reclaimed))));
	if (policy_deleted > 0)
		ereport(DEBUG1, (errmsg("pgmq maintenance of database \"%s\": %lld rows deleted by retention and "
		                        "deduplication policies", target.database, static_cast<long long>(policy_deleted))));
	if (!has_pgmq || !partman.installed)
		ereport(DEBUG1, (errmsg("pgmq maintenance: database \"%s\" has no %s: nothing to maintain", target.database,
		                        has_pgmq ? "pg_partman" : "pgmq")));
	else
		ereport(tally.failures > 0 || tally.skipped > 0 || tally.spilled > 0 ? LOG : DEBUG1,
		        (errmsg("pgmq maintenance of database \"%s\": %d tables, %d failed, %d skipped, %d with messages in "
		                "the default partition, %lld partitions premade, %lld dropped",
		                target.database, tally.tables, tally.failures, tally.skipped, tally.spilled,
		                static_cast<long long>(tally.created), static_cast<long long>(tally.dropped))));
	proc_exit(0);
}
