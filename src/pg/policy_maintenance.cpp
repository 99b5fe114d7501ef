// src/pg/policy_maintenance.cpp
// Retention and deduplication expiry (see policy_maintenance.hpp).
#include "pgmq/core/policy.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/policy_maintenance.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace pgmq::pg {

namespace {

enum class Step { Queue, Archive, Deduplication };

// Whether the step applies to the queue now.
bool StepApplies(const QueueRef &queue, const QueuePolicy &policy, Step step)
{
	switch (step) {
	case Step::Queue:
		return policy.retention && get_rel_relkind(queue.queue_relid) == RELKIND_RELATION;
	case Step::Archive: {
		// A table (plain or partitioned) only: never a view or foreign table
		// whose DELETE would run code.
		const Oid archive = get_relname_relid(queue.archive_table, get_rel_namespace(queue.queue_relid));
		const char relkind = OidIsValid(archive) ? get_rel_relkind(archive) : '\0';
		return policy.archive_retention && (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE);
	}
	case Step::Deduplication:
		return policy.exists;
	}
	return false;
}

// One batch of a step; returns the rows deleted. Requires SPI.
int64 RunBatch(const QueueRef &queue, const QueuePolicy &policy, Step step)
{
	const TimestampTz now = GetCurrentTimestamp();
	int64 deleted = 0;
	if (step == Step::Deduplication) {
		Oid types[3] = {TEXTOID, TIMESTAMPTZOID, INT8OID};
		Datum values[3] = {CStringGetTextDatum(policy.queue_name), TimestampTzGetDatum(now),
		                   Int64GetDatum(core::kRetentionBatch)};
		RunCore([&] { ExecuteOnce(core::ExpireDeduplicationBatchSql(), 3, types, values); });
	} else {
		const Interval *age = step == Step::Queue ? &policy.retention_max_age : &policy.retention_archive_max_age;
		const Datum cutoff = DirectFunctionCall2(timestamptz_mi_interval, TimestampTzGetDatum(now), IntervalPGetDatum(age));
		Oid types[2] = {TIMESTAMPTZOID, INT8OID};
		Datum values[2] = {cutoff, Int64GetDatum(core::kRetentionBatch)};
		const char *queue_table = queue.queue_table;
		const char *archive_table = queue.archive_table;
		// As the owner: the rule refuses only code of yet another role.
		const Oid relid = step == Step::Queue ? queue.queue_relid
		                                      : get_relname_relid(archive_table, get_rel_namespace(queue.queue_relid));
		if (OidIsValid(relid)) {
			LockRelationOid(relid, RowExclusiveLock);
			LockTree(relid, RowExclusiveLock);
			RequireOwnCodeOnly(relid, step == Step::Queue ? "queue table" : "archive table",
			                   step == Step::Queue ? queue_table : archive_table);
		}
		RunCore([&] {
			ExecuteOnce(step == Step::Queue ? core::RetentionQueueBatchSql(queue_table)
			                                : core::RetentionArchiveBatchSql(archive_table),
			            2, types, values);
		});
	}
	bool isnull = true;
	deleted = DatumGetInt64(ResultValue(0, 1, INT8OID, &isnull));
	return deleted;
}

constexpr Step kSteps[] = {Step::Queue, Step::Archive, Step::Deduplication};

// Retention and expiry of one queue, batch by batch, each as the owner.
// One WARNING for a queue whose policy maintenance failed (the first line of
// the error): the other queues carry on.
void WarnFailed(const char *name, const ErrorData *error)
{
	const char *message = error->message ? error->message : "";
	ereport(WARNING, (errcode(error->sqlerrcode), errmsg("pgmq policy maintenance of queue \"%s\" failed: %.*s", name,
	                                                     FirstLineLength(message), message)));
}

void MaintainQueue(const char *name, Commits mode, int64 *deleted)
{
	QueueRef queue;
	if (!FindQueueQuietly(name, static_cast<int>(strlen(name)), &queue))
		return;
	const Oid owner = RelationOwner(queue.queue_relid);
	if (!OidIsValid(owner))
		return;
	if (!has_privs_of_role(GetUserId(), owner)) {
		ereport(WARNING, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                  errmsg("pgmq maintenance skips the policies of queue \"%s\": it belongs to role \"%s\", whose "
		                         "privileges role \"%s\" does not have",
		                         name, GetUserNameFromId(owner, true), GetUserNameFromId(GetUserId(), true))));
		return;
	}
	// What applies, read in a subtransaction: an error here costs this
	// queue's run only, never the other queues' or the partition maintenance.
	QueuePolicy policy;
	bool applies[3] = {false, false, false};
	ErrorData *error = InSubtransaction([&] {
		LoadPolicy(queue, &policy);
		for (int i = 0; i < 3; i++)
			applies[i] = StepApplies(queue, policy, kSteps[i]);
	});
	if (error) {
		WarnFailed(name, error);
		return;
	}
	for (int s = 0; s < 3; s++) {
		const Step step = kSteps[s];
		if (!applies[s])
			continue;
		for (;;) {
			CHECK_FOR_INTERRUPTS();
			int64 batch = 0;
			ErrorData *batch_error =
				InSubtransaction([&] { AsOwner(owner, [&] { batch = RunBatch(queue, policy, step); }); });
			if (batch_error) {
				WarnFailed(name, batch_error);
				CommitBetweenTables(mode);
				break;
			}
			*deleted += batch;
			CommitBetweenTables(mode);
			if (batch < core::kRetentionBatch)
				break;
		}
	}
}

}  // namespace

int64 ApplyRetentionBatches(const QueueRef &queue, const QueuePolicy &policy, int64 max_batches)
{
	int64 deleted = 0;
	for (const Step step : {Step::Queue, Step::Archive}) {
		if (!StepApplies(queue, policy, step))
			continue;
		for (int64 n = 0; max_batches < 0 || n < max_batches; n++) {
			CHECK_FOR_INTERRUPTS();
			const int64 batch = RunBatch(queue, policy, step);
			deleted += batch;
			if (batch < core::kRetentionBatch)
				break;
		}
	}
	return deleted;
}

void MaintainPolicies(const char *only_queue_table, MemoryContext context, Commits mode, int64 *deleted)
{
	if (!PolicyTablesExist())
		return;
	char **names = nullptr;
	int count = 0;
	// Listed in a subtransaction: a failure here (say, a revoked SELECT on
	// pgmq.policies) skips the policies, never the partition maintenance.
	ErrorData *error = InSubtransaction([&] {
		uint64 rows = 0;
		RunCore([&] { rows = ExecuteOnce(core::RetentionQueuesSql()); });
		// Copied out: each batch's commit reconnects SPI, which frees the result.
		names = static_cast<char **>(MemoryContextAllocZero(context, sizeof(char *) * (rows + 1)));
		for (uint64 i = 0; i < rows; i++) {
			bool isnull = true;
			const Datum name = ResultValue(i, 1, TEXTOID, &isnull);
			if (isnull)
				continue;
			char *copy = MemoryContextStrdup(context, TextDatumGetCString(name));
			if (only_queue_table != nullptr) {
				QueueRef queue;
				if (!FindQueueQuietly(copy, static_cast<int>(strlen(copy)), &queue) || strcmp(queue.queue_table, only_queue_table) != 0)
					continue;
			}
			names[count++] = copy;
		}
	});
	if (error) {
		ereport(WARNING, (errcode(error->sqlerrcode), errmsg("pgmq policy maintenance could not list the policies: %.*s",
		                                                     FirstLineLength(error->message ? error->message : ""),
		                                                     error->message ? error->message : "")));
		return;
	}
	for (int i = 0; i < count; i++)
		MaintainQueue(names[i], mode, deleted);
}

}  // namespace pgmq::pg
