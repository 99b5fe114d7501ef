// src/pg/entry_stream_metrics.cpp
// What a stream's groups have left to read and what they hold
// (stream_groups), and its partitions (stream_partitions); see
// docs/streams.md and docs/monitoring.md.
#include "pgmq/core/streams.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

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
		Oid types[1] = {TEXTOID};
		Datum values[1] = {PG_ARGISNULL(0) ? Datum(0) : PG_GETARG_DATUM(0)};
		const char nulls[1] = {NullFlag(PG_ARGISNULL(0))};
		RunCore([&] { ExecuteOnce(core::GroupsSql(), 1, types, values, nulls); });
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
			if (table != nullptr && IsStreamTable(relid) &&
			    pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK) {
				VerifyTableShape(relid, table, TableRole::Queue, AccessShareLock);
				Oid backlog_types[3] = {TEXTOID, TEXTOID, OIDOID};
				Datum backlog[3] = {row[0], row[1], ObjectIdGetDatum(relid)};
				RunCore([&] { ExecuteOnce(core::GroupBacklogSql(table), 3, backlog_types, backlog); });
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
			const char *name = TextDatumGetCString(row[0]);
			RunCore([&] { ExecuteOnce(core::NewestInPartitionSql(name)); });
			row[5] = SPI_processed == 1 ? ResultValue(0, 1, TIMESTAMPTZOID, &row_nulls[5]) : Datum(0);
			row_nulls[5] = SPI_processed != 1 || row_nulls[5];
			tuplestore_putvalues(result->setResult, result->setDesc, row, row_nulls);
		}
	});
	SpiFinish();
	return Datum(0);
}
