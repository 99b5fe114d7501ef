// src/pg/entry_partition.cpp
// Partitioned queues: create_partitioned registers the queue table and its
// archive with pg_partman, which premakes partitions ahead of the messages
// and drops old ones (retention). partition_status reports the runway: how
// far the premade partitions still reach.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Registers one parent table with partman unless it already is (so create
// stays idempotent), then sets its retention. A table partman already manages
// by another column is an error: its retention would be reread as the other
// kind (an integer retention as seconds, or maintenance failing for the whole
// database). Runs inside RunCore.
void ManageParent(const Partman &partman, const std::string &parent, const std::string &column, text *interval,
                  int32 premake, text *retention)
{
	Oid text_type[1] = {TEXTOID};
	Datum parent_value[1] = {TextDatum(parent)};
	if (ExecuteOnce(core::PartConfigControlSql(partman.schema), 1, text_type, parent_value) > 0) {
		const std::string control =
			CallPostgres([] { return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1); });
		core::CheckSameControl(parent, control, column);
	} else {
		Oid types[4] = {TEXTOID, TEXTOID, TEXTOID, INT4OID};
		Datum values[4] = {parent_value[0], TextDatum(column), PointerGetDatum(interval), Int32GetDatum(premake)};
		ExecuteOnce(core::CreateParentSql(partman.schema, partman.major_version), 4, types, values);
	}
	Oid types[2] = {TEXTOID, TEXTOID};
	Datum values[2] = {PointerGetDatum(retention), parent_value[0]};
	ExecuteOnce(core::ConfigureRetentionSql(partman.schema), 2, types, values);
}

}  // namespace

// create_partitioned(queue_name text, partition_interval text DEFAULT '10000',
//                    retention_interval text DEFAULT '100000', premake int DEFAULT 4)
PGMQ_FUNCTION(pgmq_create_partitioned)
{
	QueueRef queue;
	Partman partman;
	ReadNewQueueName(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "partition_interval");
	RequireArgument(fcinfo, 2, "retention_interval");
	RequireArgument(fcinfo, 3, "premake");
	text *partition_interval = PG_GETARG_TEXT_PP(1);
	text *retention_interval = PG_GETARG_TEXT_PP(2);
	const int32 premake = PG_GETARG_INT32(3);
	const char *partition_text = text_to_cstring(partition_interval);
	const char *retention_text = text_to_cstring(retention_interval);
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		core::CheckPartitionedQueueName(name);
		core::PlanPartitioning(partition_text, retention_text, premake);
	});
	SpiConnect();
	FindPartman(&partman);
	if (!partman.installed)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("pg_partman is required for partitioned queues"),
		                errhint("CREATE EXTENSION pg_partman, then call create_partitioned again.")));
	RequireCreateOnSchema();
	LockQueueName(queue);
	core::ExistingRelations existing;
	CheckRelationsForCreate(queue, true, QueueRegistered(queue), &existing);
	if (QueueExists(&queue) && get_rel_relkind(queue.queue_relid) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_DUPLICATE_TABLE),
		                errmsg("queue \"%.*s\" already exists and is not partitioned", queue.name_len, queue.name)));
	const Datum name_datum = PG_GETARG_DATUM(0);
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		const core::PartitionPlan plan = core::PlanPartitioning(partition_text, retention_text, premake);
		text *const interval = reinterpret_cast<text *>(
			DatumGetPointer(TextDatum(core::PartmanIntervalInput(partition_text, partman.major_version))));
		if (plan.kind == core::PartitionKind::ByTime) {
			// A clear "invalid input syntax for type interval" before partman sees
			// it (4.x's named intervals, 'daily', as the durations they stand for).
			Oid types[2] = {TEXTOID, TEXTOID};
			Datum values[2] = {PointerGetDatum(retention_interval), TextDatum(core::IntervalDuration(partition_text))};
			ExecuteOnce("SELECT $1::pg_catalog.interval, $2::pg_catalog.interval", 2, types, values);
		}
		const std::vector<std::string> indexes =
			core::PartitionIndexStatements(name, plan, existing.queue_index, existing.archive_index);
		ExecuteOnce(core::CreatePartitionedQueueSql(name, plan, existing.queue_table));
		ManageParent(partman, core::PartmanParentName(queue.queue_table), plan.queue_column, interval, premake,
		             retention_interval);
		ExecuteOnce(indexes[0]);
		ExecuteOnce(core::CreatePartitionedArchiveSql(name, plan, existing.archive_table));
		ManageParent(partman, core::PartmanParentName(queue.archive_table), plan.archive_column, interval,
		             premake, retention_interval);
		ExecuteOnce(indexes[1]);
		Oid types[3] = {TEXTOID, BOOLOID, BOOLOID};
		Datum values[3] = {name_datum, BoolGetDatum(true), BoolGetDatum(false)};
		ExecuteOnce(core::InsertMetaSql(), 3, types, values);
	});
	SpiFinish();
	PG_RETURN_VOID();
}

// partition_status(queue_name text): one row for the queue table and one for
// its archive, with the runway left before messages spill into the default
// partition.
PGMQ_FUNCTION(pgmq_partition_status)
{
	QueueRef queue;
	Partman partman;
	BeginRowsResult(fcinfo);
	ResolveQueue(fcinfo, 0, &queue);
	SpiConnect();
	FindPartman(&partman);
	if (partman.installed) {
		const Datum name_datum = PG_GETARG_DATUM(0);
		const Oid sequence_relid = MsgIdSequence(queue.queue_relid, queue.queue_table);
		const Datum sequence = ObjectIdGetDatum(sequence_relid);
		RunCore([&] {
			const std::string q_default = core::QualifiedTable(std::string(queue.queue_table) + "_default");
			const std::string a_default = core::QualifiedTable(std::string(queue.archive_table) + "_default");
			Oid types[6] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, REGCLASSOID};
			Datum values[6] = {name_datum, TextDatum(core::PartmanParentName(queue.queue_table)),
			                   TextDatum(core::PartmanParentName(queue.archive_table)), TextDatum(q_default),
			                   TextDatum(a_default), sequence};
			ExecuteOnce(core::PartitionStatusSql(partman.schema), 6, types, values);
		});
		RequireSequenceRead(sequence_relid);
		EmitRows(fcinfo);
	}
	SpiFinish();
	return Datum(0);
}
