// src/pg/entry_recovery.cpp
// CALL pgmq.recover_partitioned_queue(queue_name) (not in upstream): the
// guide's recovery of an overrun queue and its archive: move the messages
// out of the default partitions, maintain, ANALYZE.
//
// It is LANGUAGE C with a non-atomic SPI connection: it commits with
// SPI_commit after each table and each batch of moved messages, and catches
// a failure with a subtransaction that ends before the commit (a COMMIT
// inside a subtransaction is not allowed). It does not CALL pg_partman's
// partition_data_proc (which commits inside, and so could not be wrapped in
// a subtransaction): it runs its one-batch function partition_data_id/_time
// itself, which is what partition_data_proc loops over, and so can retry a
// batch that lost a race with a sender.
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
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

// Second key of the recovery lock: the queue table.
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
				has_default = DefaultPartitionExists(default_table);
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
		CommitBetweenTables(Commits::Procedure);
		if (error) {
			if (++failures > kMaxBatchRetries)
				ereport(ERROR, (errcode(error->sqlerrcode),
				                errmsg("recovery of queue \"%s\": moving messages out of pgmq.%s_default failed: %.*s",
				                       table.queue_name, table.table, FirstLineLength(error->message),
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
		CommitBetweenTables(Commits::Procedure);
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
		CommitBetweenTables(Commits::Procedure);
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
			                       table.parent, FirstLineLength(error->message), error->message),
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
			if (DefaultPartitionExists(default_table))
				ExecuteOnce(core::AnalyzeSql(default_table));
		});
	});
	CommitBetweenTables(Commits::Procedure);
	ereport(NOTICE, (errmsg("%s: %lld messages moved out of its default partition in %d batches; maintenance succeeds",
	                        table.parent, static_cast<long long>(moved), batches)));
}

}  // namespace

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
	SpiConnect(true);
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
