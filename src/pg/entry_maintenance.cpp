// src/pg/entry_maintenance.cpp
// CALL pgmq.run_partition_maintenance([queue_name]) (not in upstream):
// pg_partman's maintenance table by table, each failure isolated, plus
// premaking and retention from the queue's sequence (see maintenance.hpp
// and core/maintenance.hpp). Recovery of an overrun queue is in
// entry_recovery.cpp, convert_archive_partitioned in entry_partition.cpp.
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/policy_maintenance.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/stream.hpp"

using namespace pgmq;
using namespace pgmq::pg;

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
	SpiConnect(nonatomic);
	// Retention and deduplication expiry of queues with such policies first:
	// they need no pg_partman.
	int64 policy_deleted = 0;
	MaintainPolicies(queue_table, keep, nonatomic ? Commits::Procedure : Commits::None, &policy_deleted);
	// Streams keep their own partitions: no pg_partman.
	int64 stream_partitions_made = 0, stream_partitions_reclaimed = 0;
	MaintainStreams(queue_table, keep, nonatomic ? Commits::Procedure : Commits::None, &stream_partitions_made,
	                &stream_partitions_reclaimed);
	if (queue_table != nullptr && IsStreamTable(queue.queue_relid)) {
		SpiFinish();
		PG_RETURN_VOID();
	}
	Partman partman;
	FindPartman(&partman);
	RequirePartman(partman);
	MaintainedTables list;
	ListMaintainedTables(partman, queue_table, keep, &list);
	if (queue_table != nullptr && list.count == 0)
		NotPartitioned(queue);
	MaintenanceTally tally{};
	MaintainTables(partman, &list, nonatomic ? Commits::Procedure : Commits::None, &tally);
	ereport(DEBUG1, (errmsg("pgmq partition maintenance: %d tables, %d failed, %d skipped, %d with messages in the "
	                        "default partition, %lld partitions premade, %lld dropped, %lld rows deleted by policies",
	                        tally.tables, tally.failures, tally.skipped, tally.spilled, static_cast<long long>(tally.created),
	                        static_cast<long long>(tally.dropped), static_cast<long long>(policy_deleted))));
	SpiFinish();
	PG_RETURN_VOID();
}
