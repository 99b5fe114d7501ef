// src/pg/stream_maintenance.cpp
// A stream's partitions (see stream.hpp and docs/streams.md): made ahead of
// the next transaction id, with widths that follow the rate at which the
// database uses transaction ids, and reclaimed whole once every group has
// passed them and the retention allows.
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/stream.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

namespace pgmq::pg {

namespace {

// An int8 column of the first row of the last result; `fallback` when NULL.
int64 FirstRowInt8(int column, int64 fallback)
{
	bool isnull = true;
	const Datum value = ResultValue(0, column, INT8OID, &isnull);
	return isnull ? fallback : DatumGetInt64(value);
}

double FirstRowFloat8(int column, double fallback)
{
	bool isnull = true;
	const Datum value = ResultValue(0, column, FLOAT8OID, &isnull);
	return isnull ? fallback : DatumGetFloat8(value);
}

// Retention and max_retention of the stream, in seconds.
void StreamRetention(Datum stream_name, double *retention, double *max_retention)
{
	Oid types[1] = {TEXTOID};
	Datum values[1] = {stream_name};
	RunCore([&] {
		ExecuteOnce(core::StreamRetentionSql(), 1, types, values);
	});
	*retention = SPI_processed == 1 ? FirstRowFloat8(1, 86400) : 86400;
	*max_retention = SPI_processed == 1 ? FirstRowFloat8(2, 7 * 86400) : 7 * 86400;
}

}  // namespace

int64 MakeStreamPartitionsAhead(const QueueRef &stream, Datum stream_name)
{
	const TimestampTz now = GetCurrentTimestamp();
	Oid types[3] = {TEXTOID, TIMESTAMPTZOID, OIDOID};
	Datum values[3] = {stream_name, TimestampTzGetDatum(now), ObjectIdGetDatum(stream.queue_relid)};
	RunCore([&] { ExecuteOnce(core::StreamPartitionStateSql(), 3, types, values); });
	if (SPI_processed != 1)
		return 0;
	const int64 made = FirstRowInt8(1, 0);
	const int64 width = FirstRowInt8(2, core::kFirstPartitionXids);
	const double seconds = FirstRowFloat8(3, 0);
	const int64 used = FirstRowInt8(4, 0);
	bool no_partition = true;
	const Datum upper_datum = ResultValue(0, 5, INT8OID, &no_partition);
	const int64 upper = no_partition ? 0 : DatumGetInt64(upper_datum);
	const int64 next = FirstRowInt8(6, 0);
	const double retention = FirstRowFloat8(7, 86400);
	if (!no_partition && upper - next >= width / core::kPartitionAheadDivisor)
		return 0;
	// Ids below `next` may be running: a partition starting below it could
	// meet their rows in the default partition, so a gap starts above it.
	// The first partition holds what the transactions that are already
	// running send; the next one starts at the next transaction id.
	const int64 from = no_partition ? 0 : (upper >= next ? upper : next + 1000);
	const int64 new_width = no_partition ? core::kFirstPartitionXids
	                                     : core::NextPartitionXids(used, seconds, core::SecondsPerPartition(retention));
	const int64 to = no_partition ? next : std::max(from, next) + new_width;
	// Attaching locks the default partition (every sender holds a lock on
	// it until it commits): waited for briefly, so that sends do not queue
	// behind the request for long and a deadlock with a sender cannot occur;
	// when the wait is over, the next run tries again.
	ErrorData *busy = InSubtransaction([&] {
		RunCore([&] {
			ExecuteOnce("SET LOCAL lock_timeout = '100ms'");
			const std::string partition = core::StreamPartitionName(stream.queue_table, made + 1);
			for (const std::string &statement : core::CreateStreamPartitionStatements(
					 stream.queue_table, partition, static_cast<uint64_t>(from), static_cast<uint64_t>(to)))
				ExecuteOnce(statement);
			Oid note_types[5] = {TEXTOID, INT8OID, INT8OID, TEXTOID, TIMESTAMPTZOID};
			Datum note[5] = {stream_name, Int64GetDatum(made + 1), Int64GetDatum(new_width),
			                 TextDatum(std::to_string(next)), TimestampTzGetDatum(now)};
			ExecuteOnce(core::NoteStreamPartitionSql(), 5, note_types, note);
		});
	});
	if (busy != nullptr) {
		if (busy->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(busy);
		FreeErrorData(busy);
		return 0;
	}
	return no_partition ? 1 + MakeStreamPartitionsAhead(stream, stream_name) : 1;
}

int64 ReclaimStreamPartitions(const QueueRef &stream, Datum stream_name)
{
	double retention = 0, max_retention = 0;
	StreamRetention(stream_name, &retention, &max_retention);
	Oid list_types[1] = {OIDOID};
	Datum list_values[1] = {ObjectIdGetDatum(stream.queue_relid)};
	RunCore([&] { ExecuteOnce(core::StreamPartitionsSql(), 1, list_types, list_values); });
	// Copied out: the statements below replace SPI_tuptable.
	SPITupleTable *partitions = SPI_tuptable;
	const uint64 count = SPI_processed;
	int64 reclaimed = 0;
	const TimestampTz now = GetCurrentTimestamp();
	for (uint64 i = 0; i < count; i++) {
		bool isnull = true;
		const char *name = TextDatumGetCString(SPI_getbinval(partitions->vals[i], partitions->tupdesc, 1, &isnull));
		const bool is_default = DatumGetBool(SPI_getbinval(partitions->vals[i], partitions->tupdesc, 4, &isnull));
		char *to = SPI_getvalue(partitions->vals[i], partitions->tupdesc, 3);
		if (is_default) {
			Oid types[4] = {TEXTOID, TIMESTAMPTZOID, FLOAT8OID, FLOAT8OID};
			Datum values[4] = {stream_name, TimestampTzGetDatum(now), Float8GetDatum(retention),
			                   Float8GetDatum(max_retention)};
			RunCore([&] { ExecuteOnce(core::DefaultPartitionCleanupSql(name), 4, types, values); });
			continue;
		}
		if (to == nullptr)
			continue;
		Oid types[5] = {TEXTOID, TEXTOID, TIMESTAMPTZOID, FLOAT8OID, FLOAT8OID};
		Datum values[5] = {stream_name, CStringGetTextDatum(to), TimestampTzGetDatum(now), Float8GetDatum(retention),
		                   Float8GetDatum(max_retention)};
		RunCore([&] { ExecuteOnce(core::PartitionReclaimableSql(name), 5, types, values); });
		if (!FirstRowBool(1))
			continue;
		// Never a wait: a lock request that waited would queue the stream's
		// sends and reads behind it (and a sender holds its lock on every
		// partition until it commits). Dropping locks the stream table too;
		// truncating only the partition. Neither possible now: the next run.
		ErrorData *busy = InSubtransaction([&] {
			RunCore([&] {
				for (const std::string &statement : core::DropStreamPartitionStatements(stream.queue_table, name))
					ExecuteOnce(statement);
			});
		});
		if (busy != nullptr) {
			FreeErrorData(busy);
			busy = InSubtransaction([&] {
				RunCore([&] {
					for (const std::string &statement : core::TruncateStreamPartitionStatements(name))
						ExecuteOnce(statement);
				});
			});
		}
		if (busy != nullptr) {
			FreeErrorData(busy);
			continue;
		}
		reclaimed++;
	}
	return reclaimed;
}

void MaintainStreams(const char *only_queue_table, MemoryContext context, Commits mode, int64 *made, int64 *reclaimed)
{
	char **names = nullptr;
	int count = 0;
	ErrorData *error = InSubtransaction([&] {
		InStreamScope([&] { RunCore([&] { ExecuteOnce(core::StreamNamesSql()); }); });
		names = static_cast<char **>(MemoryContextAllocZero(context, sizeof(char *) * (SPI_processed + 1)));
		for (uint64 i = 0; i < SPI_processed; i++) {
			bool isnull = true;
			const Datum name = ResultValue(i, 1, TEXTOID, &isnull);
			if (!isnull)
				names[count++] = MemoryContextStrdup(context, TextDatumGetCString(name));
		}
	});
	if (error) {
		// Before this version's tables exist (an update not yet run), or a
		// revoked SELECT: no stream is maintained, nothing else is stopped.
		FreeErrorData(error);
		return;
	}
	for (int i = 0; i < count; i++) {
		QueueRef stream;
		if (!FindQueueQuietly(names[i], static_cast<int>(strlen(names[i])), &stream) ||
		    !IsStreamTable(stream.queue_relid) ||
		    (only_queue_table != nullptr && strcmp(stream.queue_table, only_queue_table) != 0))
			continue;
		const Oid owner = RelationOwner(stream.queue_relid);
		if (!has_privs_of_role(GetUserId(), owner)) {
			ereport(WARNING, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                  errmsg("pgmq maintenance skips stream \"%s\": it belongs to role \"%s\", whose privileges "
			                         "role \"%s\" does not have",
			                         names[i], GetUserNameFromId(owner, true), GetUserNameFromId(GetUserId(), true))));
			continue;
		}
		int64 stream_made = 0, stream_reclaimed = 0;
		ErrorData *failed = InSubtransaction([&] {
			AsOwner(owner, [&] {
				const Datum name = CStringGetTextDatum(names[i]);
				stream_reclaimed = ReclaimStreamPartitions(stream, name);
				stream_made = MakeStreamPartitionsAhead(stream, name);
			});
		});
		if (failed) {
			ereport(WARNING, (errcode(failed->sqlerrcode),
			                  errmsg("pgmq maintenance of stream \"%s\" failed: %.*s", names[i],
			                         FirstLineLength(failed->message ? failed->message : ""),
			                         failed->message ? failed->message : "")));
			FreeErrorData(failed);
		} else {
			*made += stream_made;
			*reclaimed += stream_reclaimed;
		}
		CommitBetweenTables(mode);
	}
}

}  // namespace pgmq::pg
