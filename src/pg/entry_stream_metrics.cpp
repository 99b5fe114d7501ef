// src/pg/entry_stream_metrics.cpp
// What a stream's groups have left to read and what they hold
// (stream_groups), and its partitions (stream_partitions); see
// docs/streams.md and docs/monitoring.md.
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Whether the current role may read the stream's table and the table runs
// no other role's code (table_trust.hpp); a refused one is skipped with a
// WARNING, as metrics_all skips a queue: one tenant's table cannot fail
// every group's figures.
bool Readable(Oid relid, const char *stream_name, const char *table)
{
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return false;
	ForeignCode found;
	if (CheckTables(&relid, 1, &found) == 0)
		return true;
	ereport(WARNING, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
	                  errmsg("skipping the figures of stream \"%s\": its table pgmq.%s carries %s, which %s", stream_name,
	                         quote_identifier(table), found.carrier, found.problem)));
	return false;
}

}  // namespace

// stream_groups(stream_name text DEFAULT NULL) -> one row per group of the
// stream (NULL: of every stream). The backlog figures (pending, oldest,
// held bytes) are NULL for a stream the caller may not read.
PGMQ_FUNCTION(pgmq_stream_groups)
{
	QueueRef only;
	if (!PG_ARGISNULL(0))
		ResolveStream(fcinfo, 0, &only);
	BeginRowsResult(fcinfo);
	auto *result = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	SpiConnect();
	InStreamScope([&] {
		const double now = static_cast<double>(GetCurrentTimestamp() - SetEpochTimestamp()) / USECS_PER_SEC;
		Oid types[2] = {TEXTOID, FLOAT8OID};
		Datum values[2] = {PG_ARGISNULL(0) ? Datum(0) : PG_GETARG_DATUM(0), Float8GetDatum(now)};
		const char nulls[2] = {NullFlag(PG_ARGISNULL(0)), ' '};
		RunCore([&] { ExecuteOnce(core::GroupsSql(), 2, types, values, nulls); });
		SPITupleTable *groups = SPI_tuptable;
		const uint64 count = SPI_processed;
		for (uint64 i = 0; i < count; i++) {
			CHECK_FOR_INTERRUPTS();
			Datum row[12];
			bool row_nulls[12];
			bool isnull = true;
			auto column = [&](int c) { return SPI_getbinval(groups->vals[i], groups->tupdesc, c, &isnull); };
			row[0] = column(1);
			row_nulls[0] = isnull;
			row[1] = column(2);
			row_nulls[1] = isnull;
			// The table by the stream's name, never by the row's stream_relid,
			// which the row's owner could point at another stream's table.
			QueueRef stream;
			const char *stream_name = TextDatumGetCString(row[0]);
			const Oid relid = FindQueueQuietly(stream_name, static_cast<int>(strlen(stream_name)), &stream)
			                      ? stream.queue_relid
			                      : InvalidOid;
			row[3] = column(3);
			row_nulls[3] = isnull;
			// Columns 4..9 (last_read_at .. subscribed_at), around held_bytes.
			const int targets[6] = {5, 6, 8, 9, 10, 11};
			for (int c = 0; c < 6; c++) {
				row[targets[c]] = column(c + 4);
				row_nulls[targets[c]] = isnull;
			}
			row_nulls[2] = row_nulls[4] = row_nulls[7] = true;
			row[2] = row[4] = row[7] = Datum(0);
			const char *table = OidIsValid(relid) ? get_rel_name(relid) : nullptr;
			if (table != nullptr && IsStreamTable(relid) && Readable(relid, stream_name, table)) {
				VerifyTableShape(relid, table, TableRole::Queue, AccessShareLock);
				Oid backlog_types[4] = {TEXTOID, TEXTOID, OIDOID, FLOAT8OID};
				Datum backlog[4] = {row[0], row[1], ObjectIdGetDatum(relid), Float8GetDatum(now)};
				RunCore([&] { ExecuteOnce(core::GroupBacklogSql(table), 4, backlog_types, backlog); });
				if (SPI_processed == 1) {
					row[2] = ResultValue(0, 1, INT8OID, &row_nulls[2]);
					row[4] = ResultValue(0, 2, TIMESTAMPTZOID, &row_nulls[4]);
					row[7] = ResultValue(0, 3, INT8OID, &row_nulls[7]);
				}
			}
			tuplestore_putvalues(result->setResult, result->setDesc, row, row_nulls);
		}
	});
	SpiFinish();
	return Datum(0);
}

// stream_partitions(stream_name text) -> its partitions in xid order, the
// default partition first.
PGMQ_FUNCTION(pgmq_stream_partitions)
{
	QueueRef stream;
	ResolveStream(fcinfo, 0, &stream);
	BeginRowsResult(fcinfo);
	auto *result = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	SpiConnect();
	InStreamScope([&] {
		Oid types[1] = {OIDOID};
		Datum values[1] = {ObjectIdGetDatum(stream.queue_relid)};
		RunCore([&] { ExecuteOnce(core::StreamPartitionsSql(), 1, types, values); });
		SPITupleTable *partitions = SPI_tuptable;
		const uint64 count = SPI_processed;
		for (uint64 i = 0; i < count; i++) {
			Datum row[6];
			bool row_nulls[6];
			for (int c = 0; c < 5; c++)
				row[c] = SPI_getbinval(partitions->vals[i], partitions->tupdesc, c + 1, &row_nulls[c]);
			// Through the stream table, whose privileges are the granted ones;
			// the default partition (no range) only for its readers.
			row_nulls[5] = true;
			row[5] = Datum(0);
			uint64 found = 0;
			if (!row_nulls[1]) {
				Oid range_types[2] = {TEXTOID, TEXTOID};
				Datum range[2] = {DirectFunctionCall1(xid8out, row[1]), DirectFunctionCall1(xid8out, row[2])};
				range[0] = CStringGetTextDatum(DatumGetCString(range[0]));
				range[1] = CStringGetTextDatum(DatumGetCString(range[1]));
				RunCore([&] { found = ExecuteOnce(core::NewestInRangeSql(stream.queue_table), 2, range_types, range); });
			} else {
				const char *name = TextDatumGetCString(row[0]);
				const Oid partition = get_relname_relid(name, get_rel_namespace(stream.queue_relid));
				if (OidIsValid(partition) && pg_class_aclcheck(partition, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
					RunCore([&] { found = ExecuteOnce(core::NewestInPartitionSql(name)); });
			}
			if (found == 1)
				row[5] = ResultValue(0, 1, TIMESTAMPTZOID, &row_nulls[5]);
			tuplestore_putvalues(result->setResult, result->setDesc, row, row_nulls);
		}
	});
	SpiFinish();
	return Datum(0);
}
