// src/pg/entry_maintenance.cpp
// Looking after partitioned queues (not in upstream, but for
// convert_archive_partitioned):
//   CALL pgmq.run_partition_maintenance([queue_name]) - pg_partman's
//     maintenance table by table, each failure isolated, plus premaking and
//     retention from the queue's sequence (see core/maintenance.hpp);
//   CALL pgmq.recover_partitioned_queue(queue_name) - the guide's recovery
//     of an overrun queue and its archive: move the messages out of the
//     default partitions, maintain, ANALYZE;
//   pgmq.convert_archive_partitioned(...) - an existing archive becomes a
//     pg_partman-managed partitioned table, keeping its rows.
//
// The two procedures are LANGUAGE C with a non-atomic SPI connection: they
// commit with SPI_commit after each table and each batch of moved messages,
// and catch a failure with a subtransaction that ends before the commit
// (a COMMIT inside a subtransaction is not allowed). They do not CALL
// pg_partman's partition_data_proc (which commits inside, and so could not
// be wrapped in a subtransaction): they run its one-batch function
// partition_data_id/_time themselves, which is what partition_data_proc
// loops over, and so can retry a batch that lost a race with a sender.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Batches of one recovery that may fail in a row (a batch loses a race
// with a sender whose message, sent before the move, commits during it)
// before the recovery gives up.
constexpr int kMaxBatchRetries = 5;
// Rounds of move + maintenance: messages that spill while a round moves
// make its maintenance fail, and the next round moves them too.
constexpr int kMaxRecoveryRounds = 5;
// First key of the session advisory lock that keeps two recoveries of one
// queue apart ('pgmq').
constexpr int32 kRecoveryLockKey = 0x70676d71;

// The owner of relation relid (which exists).
Oid RelationOwnerOf(Oid relid)
{
	HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation %u does not exist", relid)));
	const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

// Whether the procedure was called with CALL outside a transaction block
// (or from a procedure that was), where it may commit.
bool NonAtomicCall(FunctionCallInfo fcinfo)
{
	return fcinfo->context != nullptr && IsA(fcinfo->context, CallContext) &&
	       !castNode(CallContext, fcinfo->context)->atomic;
}

void ConnectSpi(bool nonatomic)
{
	const int rc = SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0);
	if (rc != SPI_OK_CONNECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_connect failed: %s", SPI_result_code_string(rc))));
}

void RequirePartman(const Partman &partman)
{
	if (!partman.installed)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("pg_partman is required for partitioned queues"),
		                errhint("CREATE EXTENSION pg_partman, then call create_partitioned again.")));
}

void NotPartitioned(const QueueRef &queue)
{
	ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
	                errmsg("queue \"%.*s\" is not partitioned", queue.name_len, queue.name),
	                errdetail("pg_partman manages neither pgmq.%s nor pgmq.%s.", queue.queue_table, queue.archive_table)));
}

int32 RecoveryLockKey(const QueueRef &queue)
{
	return static_cast<int32>(hash_bytes(reinterpret_cast<const unsigned char *>(queue.queue_table),
	                                     static_cast<int>(strlen(queue.queue_table))));
}

// How long a batch waits for its SHARE lock on the table (then it fails,
// and is retried).
constexpr const char *kBatchLockTimeoutMs = "2000";

// Rows moved by one batch out of the default partition of table; the batch
// holds the table while it may create the partition inserts go to (see
// core::BatchNeedsLock).
int64 MoveOneBatch(const Partman &partman, const MaintainedTable &table)
{
	int64 moved = 0;
	bool has_default = false;
	// pg_partman moves the rows through a temporary table, which PostgreSQL
	// forbids under SECURITY_RESTRICTED_OPERATION: made first, as the owner
	// (a table LIKE the default partition runs none of its code), with
	// pg_partman's own statement, which it then skips as existing.
	AsTableOwner(
		table,
		[&] {
			RunCore([&] {
				const std::string default_table = core::DefaultPartitionName(table.table);
				Oid types[1] = {TEXTOID};
				Datum values[1] = {TextDatum(core::QualifiedTable(default_table))};
				ExecuteOnce(core::RelationExistsSql(), 1, types, values);
				bool isnull = true;
				has_default = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
				if (has_default)
					ExecuteOnce(core::CreatePartmanMoveTableSql(default_table));
			});
		},
		false);
	if (!has_default)
		return 0;
	AsTableOwner(table, [&] {
		// pg_partman's "relation already exists, skipping" on every batch.
		(void) set_config_option("client_min_messages", "warning", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
		                         false);
		RunCore([&] {
			bool lock = true;
			if (!table.is_archive && table.kind == core::PartitionKind::ById) {
				Oid types[1] = {TEXTOID};
				Datum values[1] = {TextDatum(core::QualifiedTable(table.queue_table))};
				ExecuteOnce(core::NextBatchSql(table.table), 1, types, values);
				bool last_null = true, min_null = true;
				const Datum last = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &last_null);
				const Datum min = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &min_null);
				lock = core::BatchNeedsLock(last_null ? std::nullopt : std::optional<int64_t>(DatumGetInt64(last)),
				                            min_null ? std::nullopt : std::optional<int64_t>(DatumGetInt64(min)), table.step);
			}
			if (lock) {
				Oid types[1] = {TEXTOID};
				Datum values[1] = {TextDatum(kBatchLockTimeoutMs)};
				ExecuteOnce(core::SetLocalLockTimeoutSql(), 1, types, values);
				ExecuteOnce(core::LockTableShareSql(table.table));
			}
			Oid types[1] = {TEXTOID};
			Datum values[1] = {TextDatum(table.parent)};
			ExecuteOnce(core::MoveOutOfDefaultSql(partman.schema, table.kind), 1, types, values);
			bool isnull = true;
			const Datum rows = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
			moved = isnull ? 0 : DatumGetInt64(rows);
		});
	});
	return moved;
}

// Moves every row out of the default partition of table, one partition's
// worth per transaction. Returns the rows moved; *batches counts batches.
// keep: memory that outlives the commits.
int64 EmptyDefaultPartition(const Partman &partman, const MaintainedTable &table, MemoryContext keep, int *batches)
{
	int64 total = 0;
	int failures = 0;
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		int64 moved = 0;
		ErrorData *error = InSubtransaction([&] { moved = MoveOneBatch(partman, table); }, keep);
		CommitBetweenTables(Commits::kProcedure);
		if (error) {
			if (++failures > kMaxBatchRetries)
				ereport(ERROR, (errcode(error->sqlerrcode),
				                errmsg("recovery of queue \"%s\": moving messages out of pgmq.%s_default failed: %.*s",
				                       table.queue_name, table.table, static_cast<int>(strcspn(error->message, "\n")),
				                       error->message),
				                errdetail("%d batches failed in a row; %lld messages were moved and committed before.",
				                          failures, static_cast<long long>(total)),
				                errhint("Run the recovery again.")));
			ereport(DEBUG1, (errmsg("recovery of queue \"%s\": a batch failed, retrying: %s", table.queue_name,
			                        error->message)));
			pg_usleep(100000L * failures);
			continue;
		}
		failures = 0;
		if (moved <= 0)
			return total;
		total += moved;
		(*batches)++;
		ereport(DEBUG1, (errmsg("recovery of queue \"%s\": batch %d moved %lld messages out of pgmq.%s_default",
		                        table.queue_name, *batches, static_cast<long long>(moved), table.table)));
	}
}

// The guide's three steps for one table, committing as it goes, as its
// owner (see CheckMaintainedTable). keep: memory that outlives the commits.
void RecoverTable(const Partman &partman, MaintainedTable &table, MemoryContext keep)
{
	char why[2 * NAMEDATALEN + 128];
	int sqlstate = 0;
	if (!CheckMaintainedTable(&table, why, sizeof why, &sqlstate))
		ereport(ERROR, (errcode(sqlstate), errmsg("recovery of queue \"%s\" refuses %s: %s", table.queue_name,
		                                          table.parent, why)));
	const bool by_id = table.kind == core::PartitionKind::ById;
	int64 unused = 0;
	// Partitions above everything that spilled first, so that new messages
	// stop landing in the default partition while it is being emptied.
	if (by_id) {
		(void) InSubtransaction([&] { MaintainFromSequence(partman, table, false, &unused, &unused); });
		CommitBetweenTables(Commits::kProcedure);
	}
	int64 moved = 0;
	int batches = 0;
	for (int round = 1;; round++) {
		moved += EmptyDefaultPartition(partman, table, keep, &batches);
		// Holding the table: maintenance may create the partition that new
		// messages still go to (by time: the current one), as a batch may.
		ErrorData *error = InSubtransaction(
			[&] {
				if (!RunPartmanMaintenance(partman, table, kBatchLockTimeoutMs))
					ereport(ERROR, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					                errmsg("another session holds pg_partman's maintenance lock")));
				if (by_id)
					MaintainFromSequence(partman, table, true, &unused, &unused);
			},
			keep);
		CommitBetweenTables(Commits::kProcedure);
		if (!error)
			break;
		// Messages that spilled meanwhile, or a lock not granted in time:
		// the next round moves them and tries again.
		if (round >= kMaxRecoveryRounds) {
			bool spilled = false;
			if (InSubtransaction([&] { spilled = DefaultPartitionHasRows(table); }) != nullptr)
				spilled = false;
			ereport(ERROR, (errcode(error->sqlerrcode),
			                errmsg("recovery of queue \"%s\": maintenance of %s still fails: %.*s", table.queue_name,
			                       table.parent, static_cast<int>(strcspn(error->message, "\n")), error->message),
			                spilled ? errdetail("Messages keep arriving in pgmq.%s_default faster than they are moved "
			                                    "(%d rounds).",
			                                    table.table, round)
			                        : 0,
			                errhint("%lld messages were moved and committed; run the recovery again.",
			                        static_cast<long long>(moved))));
		}
		ereport(DEBUG1, (errmsg("recovery of queue \"%s\": maintenance of %s failed in round %d, retrying: %s",
		                        table.queue_name, table.parent, round, error->message)));
		pg_usleep(100000L * round);
	}
	// The metric default_partition_length reads the planner's statistics.
	AsTableOwner(table, [&] {
		RunCore([&] {
			const std::string default_table = core::DefaultPartitionName(table.table);
			Oid types[1] = {TEXTOID};
			Datum values[1] = {TextDatum(core::QualifiedTable(default_table))};
			ExecuteOnce(core::RelationExistsSql(), 1, types, values);
			bool isnull = true;
			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
				ExecuteOnce(core::AnalyzeSql(default_table));
		});
	});
	CommitBetweenTables(Commits::kProcedure);
	ereport(NOTICE, (errmsg("%s: %lld messages moved out of its default partition in %d batches; maintenance succeeds",
	                        table.parent, static_cast<long long>(moved), batches)));
}

}  // namespace

// run_partition_maintenance(queue_name text DEFAULT NULL), a procedure:
// every partitioned queue (NULL) or one. Commits after each table when
// called outside a transaction block; inside one, subtransactions still
// keep one table's failure from the others.
PGMQ_FUNCTION(pgmq_run_partition_maintenance)
{
	const bool nonatomic = NonAtomicCall(fcinfo);
	QueueRef queue;
	const char *queue_table = nullptr;
	if (!PG_ARGISNULL(0)) {
		ResolveQueue(fcinfo, 0, &queue);
		queue_table = queue.queue_table;
	}
	// Outlives the commits: it belongs to the CALL, not to a transaction.
	MemoryContext keep = CurrentMemoryContext;
	ConnectSpi(nonatomic);
	Partman partman;
	FindPartman(&partman);
	RequirePartman(partman);
	MaintainedTables list;
	ListMaintainedTables(partman, queue_table, keep, &list);
	if (queue_table != nullptr && list.count == 0)
		NotPartitioned(queue);
	MaintenanceTally tally{};
	MaintainTables(partman, &list, nonatomic ? Commits::kProcedure : Commits::kNone, &tally);
	ereport(DEBUG1, (errmsg("pgmq partition maintenance: %d tables, %d failed, %d skipped, %d with messages in the "
	                        "default partition, %lld partitions premade, %lld dropped",
	                        tally.tables, tally.failures, tally.skipped, tally.spilled, static_cast<long long>(tally.created),
	                        static_cast<long long>(tally.dropped))));
	SpiFinish();
	PG_RETURN_VOID();
}

// recover_partitioned_queue(queue_name text), a procedure: for the queue
// table and its archive, moves the messages of the default partition into
// partitions of their own, runs maintenance, and ANALYZEs the default
// partition. Commits as it goes, so it refuses to run in a transaction
// block. Every message keeps its msg_id and columns. Safe to run again, and
// while producers send (see docs/partitioned-queues.md).
PGMQ_FUNCTION(pgmq_recover_partitioned_queue)
{
	if (!NonAtomicCall(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
		                errmsg("pgmq.recover_partitioned_queue() cannot run inside a transaction block"),
		                errdetail("It commits after each batch of messages it moves."),
		                errhint("Run CALL pgmq.recover_partitioned_queue(...) on its own, outside BEGIN ... COMMIT "
		                        "and not from a function.")));
	QueueRef queue;
	ResolveQueue(fcinfo, 0, &queue);
	MemoryContext keep = CurrentMemoryContext;
	ConnectSpi(true);
	Partman partman;
	FindPartman(&partman);
	RequirePartman(partman);
	MaintainedTables list;
	ListMaintainedTables(partman, queue.queue_table, keep, &list);
	if (list.count == 0)
		NotPartitioned(queue);
	// One recovery of a queue at a time: a second one waits, then finds
	// nothing left to move. A session lock, because it must outlive the
	// commits; released on error too.
	const Datum lock_key1 = Int32GetDatum(kRecoveryLockKey);
	const Datum lock_key2 = Int32GetDatum(RecoveryLockKey(queue));
	DirectFunctionCall2(pg_advisory_lock_int4, lock_key1, lock_key2);
	PG_TRY();
	{
		for (int i = 0; i < list.count; i++)
			RecoverTable(partman, list.tables[i], keep);
	}
	PG_CATCH();
	{
		DirectFunctionCall2(pg_advisory_unlock_int4, lock_key1, lock_key2);
		PG_RE_THROW();
	}
	PG_END_TRY();
	DirectFunctionCall2(pg_advisory_unlock_int4, lock_key1, lock_key2);
	SpiFinish();
	PG_RETURN_VOID();
}

// convert_archive_partitioned(table_name text, partition_interval text
// DEFAULT '10000', retention_interval text DEFAULT '100000',
// leading_partition integer DEFAULT 10): the archive pgmq.a_<name> becomes
// a partitioned table managed by pg_partman, by msg_id (integer interval) or
// archived_at (duration). Unlike upstream, the archived rows move into the
// new table: upstream leaves them behind in a_<name>_old, outside the
// archive, where nothing reads them and drop_queue never removes them.
// leading_partition is ignored, as upstream does.
PGMQ_FUNCTION(pgmq_convert_archive_partitioned)
{
	QueueRef queue;
	ReadQueueName(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "partition_interval");
	RequireArgument(fcinfo, 2, "retention_interval");
	text *partition_interval = PG_GETARG_TEXT_PP(1);
	text *retention_interval = PG_GETARG_TEXT_PP(2);
	const char *partition_text = text_to_cstring(partition_interval);
	const char *retention_text = text_to_cstring(retention_interval);

	const Oid pgmq_namespace = get_namespace_oid("pgmq", false);
	const Oid archive_relid = get_relname_relid(queue.archive_table, pgmq_namespace);
	const char relkind = OidIsValid(archive_relid) ? get_rel_relkind(archive_relid) : '\0';
	char notice[2 * NAMEDATALEN + 64];
	if (relkind != RELKIND_RELATION) {
		RunCore([&] {
			const std::string text = relkind == RELKIND_PARTITIONED_TABLE ? core::AlreadyPartitionedNotice(queue.archive_table)
			                                                              : core::ArchiveMissingNotice(queue.archive_table);
			strlcpy(notice, text.c_str(), sizeof notice);
		});
		ereport(NOTICE, (errmsg("%s", notice)));
		PG_RETURN_VOID();
	}

	RunCore([&] {
		core::CheckPartitionedQueueName(std::string_view(queue.name, queue.name_len));
		core::PlanPartitioning(partition_text, retention_text, 1);
	});
	// Everything below runs as the archive's owner, under
	// SECURITY_RESTRICTED_OPERATION (its triggers fire as rows move): only
	// a role with the owner's privileges may convert it.
	const Oid owner = RelationOwnerOf(archive_relid);
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("must be owner of table %s", queue.archive_table)));
	SpiConnect();
	Partman partman;
	FindPartman(&partman);
	RequirePartman(partman);
	LockQueueName(queue);
	int64 kept = 0;
	AsOwner(owner, [&] {
		RunCore([&] {
			const std::string_view name(queue.name, queue.name_len);
			const core::PartitionPlan plan = core::PlanPartitioning(partition_text, retention_text, 1);
			text *const interval = reinterpret_cast<text *>(
				DatumGetPointer(TextDatum(core::PartmanIntervalInput(partition_text, partman.major_version))));
			if (plan.kind == core::PartitionKind::ByTime) {
				// A clear interval error before partman sees the value (as create_partitioned).
				Oid types[2] = {TEXTOID, TEXTOID};
				Datum values[2] = {PointerGetDatum(retention_interval), TextDatum(core::IntervalDuration(partition_text))};
				ExecuteOnce("SELECT $1::pg_catalog.interval, $2::pg_catalog.interval", 2, types, values);
			}
			const std::string archive = queue.archive_table;
			const std::string old = core::OldArchiveTable(archive);
			const std::string parent = core::PartmanParentName(archive);
			// The grants of the old archive go to the new one (upstream loses
			// them, and archive() then fails for the roles that had them).
			std::vector<std::string> grants;
			{
				Oid types[1] = {OIDOID};
				Datum values[1] = {ObjectIdGetDatum(archive_relid)};
				const uint64 rows = ExecuteOnce(core::TableGrantsSql(), 1, types, values);
				for (uint64 i = 0; i < rows; i++) {
					const char *grantee = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
					const char *privilege = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
					bool isnull = true;
					const bool grantable =
						DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull)) && !isnull;
					grants.push_back(core::GrantSql(archive, privilege ? privilege : "",
					                                grantee ? std::optional<std::string>(grantee) : std::nullopt, grantable));
				}
			}
			ExecuteOnce(core::RenameTableSql(archive, old));
			ExecuteOnce(core::CreateConvertedArchiveSql(archive, old, plan));
			for (const std::string &grant : grants)
				ExecuteOnce(grant);
			{
				Oid types[4] = {TEXTOID, TEXTOID, TEXTOID, INT4OID};
				// premake 4: what upstream gets by leaving pg_partman's default.
				Datum values[4] = {TextDatum(parent), TextDatum(plan.archive_column), PointerGetDatum(interval),
				                   Int32GetDatum(4)};
				ExecuteOnce(core::CreateParentSql(partman.schema, partman.major_version), 4, types, values);
			}
			{
				Oid types[2] = {TEXTOID, TEXTOID};
				Datum values[2] = {TextDatum(parent), TextDatum(core::PartmanParentName(old))};
				for (;;) {
					ExecuteOnce(core::MoveFromTableSql(partman.schema, plan.kind), 2, types, values);
					bool isnull = true;
					const Datum rows = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
					if (isnull || DatumGetInt64(rows) <= 0)
						break;
					kept += DatumGetInt64(rows);
				}
			}
			ExecuteOnce(core::DropTableSql(old));
			for (const std::string &statement : core::ConvertedArchiveIndexStatements(name, plan))
				ExecuteOnce(statement);
			Oid types[2] = {TEXTOID, TEXTOID};
			Datum values[2] = {PointerGetDatum(retention_interval), TextDatum(parent)};
			ExecuteOnce(core::ConfigureRetentionSql(partman.schema), 2, types, values);
		});
	});
	SpiFinish();
	ereport(NOTICE, (errmsg("pgmq.%s is partitioned now; its %lld archived messages were kept", queue.archive_table,
	                        static_cast<long long>(kept))));
	PG_RETURN_VOID();
}
