// src/pg/entry_partition.cpp
// Partitioned queues: create_partitioned registers the queue table and its
// archive with pg_partman, which premakes partitions ahead of the messages
// and drops old ones (retention). partition_status reports the runway: how
// far the premade partitions still reach. convert_archive_partitioned turns
// an existing archive into a partitioned one.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/integers.hpp"
#include "pgmq/core/error.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/default_partition.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance_worker.hpp"
#include "pgmq/pg/maintenance.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
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

}  // namespace

// create_partitioned(queue_name text, partition_interval text DEFAULT '10000',
//                    retention_interval text DEFAULT NULL, premake int DEFAULT 4)
PGMQ_FUNCTION(pgmq_create_partitioned)
{
	QueueRef queue;
	Partman partman;
	ReadNewQueueName(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "partition_interval");
	RequireArgument(fcinfo, 3, "premake");
	text *partition_interval = PG_GETARG_TEXT_PP(1);
	const int32 premake = PG_GETARG_INT32(3);
	const char *partition_text = text_to_cstring(partition_interval);
	// A retention left out (NULL) is one of the interval's kind
	// (core::DefaultRetention): ids here, a duration once SPI is connected.
	const char *retention_text = PG_ARGISNULL(2) ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(2));
	char id_retention[16] = "";
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		core::CheckPartitionedQueueName(name);
		if (!retention_text) {
			const std::string ids = core::DefaultRetention(partition_text);
			ids.copy(id_retention, sizeof id_retention - 1);
		}
		const char *checked = retention_text ? retention_text : id_retention[0] ? id_retention : partition_text;
		core::PlanPartitioning(partition_text, checked, premake);
	});
	if (!retention_text && id_retention[0])
		retention_text = id_retention;
	SpiConnect();
	if (!retention_text)
		RunCore([&] {
			const std::string duration = DefaultTimeRetention(partition_text);
			retention_text = CallPostgres([&] { return pstrdup(duration.c_str()); });
		});
	text *retention_interval = cstring_to_text(retention_text);
	FindPartman(&partman);
	RequirePartman(partman);
	RequireCreateOnSchema();
	LockQueueName(queue);
	core::ExistingRelations existing;
	const Registration registration = FindRegistration(&queue);
	// An existing queue keeps the name it was registered under (its archive
	// index is named after it).
	const Datum name_datum = registration.registered ? registration.name : PG_GETARG_DATUM(0);
	text *name_text = DatumGetTextPP(name_datum);
	queue.name = VARDATA_ANY(name_text);
	queue.name_len = VARSIZE_ANY_EXHDR(name_text);
	CheckRelationsForCreate(queue, true, registration.registered, &existing);
	if (QueueExists(&queue) && get_rel_relkind(queue.queue_relid) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_DUPLICATE_TABLE),
		                errmsg("queue \"%.*s\" already exists and is not partitioned", queue.name_len, queue.name)));
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		const core::PartitionPlan plan = core::PlanPartitioning(partition_text, retention_text, premake);
		text *const interval = reinterpret_cast<text *>(
			DatumGetPointer(TextDatum(core::PartmanIntervalInput(partition_text, partman.major_version))));
		if (plan.kind == core::PartitionKind::ByTime)
			CheckTimeIntervals(retention_text, partition_text);
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
		RegisterQueue(registration, name_datum, true, false);
	});
	SpiFinish();
	if (!PartitionsMaintainedHere())
		ereport(WARNING,
		        (errmsg("no background worker maintains the partitions of queue \"%.*s\" in this database",
		                queue.name_len, queue.name),
		         errdetail("Without maintenance no partition is made beyond the premade ones, and once sends pass "
		                   "them, messages land in the default partition."),
		         errhint("List the database in pgmq.maintenance_database (with pgmq in shared_preload_libraries), "
		                 "or CALL pgmq.run_partition_maintenance() from a scheduler such as pg_cron.")));
	PG_RETURN_VOID();
}

namespace {

// Columns of partition_status (0-based) that the adapter reads or fills.
constexpr int kStatusParentTable = 1;
constexpr int kStatusPartitionInterval = 3;
constexpr int kStatusRunwayMessages = 7;
constexpr int kStatusDefaultRows = 9;
constexpr int kStatusRunwaySeconds = 10;
constexpr int kStatusColumns = 11;

// The send rate of the queue, as a sample: the message about `window` ids
// before the newest, and how long ago it was sent (RecentSend, through the
// msg_id index). false when the caller may not read the queue table or it
// holds no message to measure from. A table that would run another role's
// code (a row-security policy's function, say) is refused by PlanFor, as
// for every statement. May ereport.
bool SampleSendRate(const QueueRef &queue, int32 window, core::SendRateSample *sample)
{
	if (pg_class_aclcheck(queue.queue_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return false;
	Oid sequence = InvalidOid;
	SPIPlanPtr plan = PlanFor(queue, core::Statement::RecentSend, &sequence);
	Datum args[2] = {Int64GetDatum(window), ObjectIdGetDatum(sequence)};
	const char arg_nulls[2] = {' ', ' '};
	if (ExecutePlan(plan, args, arg_nulls) != 1)
		return false;
	bool last_null, id_null, age_null;
	const int64 last_id = DatumGetInt64(ResultValue(0, 1, INT8OID, &last_null, queue.queue_table));
	const int64 ref_id = DatumGetInt64(ResultValue(0, 2, INT8OID, &id_null, queue.queue_table));
	const double age = DatumGetFloat8(ResultValue(0, 3, FLOAT8OID, &age_null, queue.queue_table));
	if (last_null || id_null || age_null || ref_id > last_id)
		return false;
	sample->ids = last_id - ref_id;
	sample->age_seconds = age;
	return true;
}

}  // namespace

// partition_status(queue_name text): one row for the queue table and one for
// its archive, with the runway left before messages spill into the default
// partition, how long it lasts at the current send rate, and the rows
// already in the default partition.
PGMQ_FUNCTION(pgmq_partition_status)
{
	QueueRef queue;
	Partman partman;
	BeginRowsResult(fcinfo);
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	ResolveQueue(fcinfo, 0, &queue);
	SpiConnect();
	FindPartman(&partman);
	if (partman.installed) {
		const Datum name_datum = PG_GETARG_DATUM(0);
		const Oid sequence_relid = MsgIdSequence(queue.queue_relid, queue.queue_table);
		const Datum sequence = ObjectIdGetDatum(sequence_relid);
		// pg_partman's name of the queue table, to tell its row from the archive's.
		const char *queue_parent = psprintf("pgmq.%s", queue.queue_table);
		RunCore([&] {
			Oid types[4] = {TEXTOID, TEXTOID, TEXTOID, REGCLASSOID};
			Datum values[4] = {name_datum, TextDatum(core::PartmanParentName(queue.queue_table)),
			                   TextDatum(core::PartmanParentName(queue.archive_table)), sequence};
			ExecuteOnce(core::PartitionStatusSql(partman.schema), 4, types, values);
		});
		RequireSequenceRead(sequence_relid);
		// Kept until SPI_finish, while the sample below runs its own statement.
		SPITupleTable *status = SPI_tuptable;
		const uint64 rows = SPI_processed;
		if (rows > 0) {
			RequireRowType(status->tupdesc, rsinfo->setDesc, nullptr);
			if (rsinfo->setDesc->natts != kStatusColumns)
				ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
				                errmsg("partition_status must return %d columns", kStatusColumns)));
		}
		const Oid namespace_oid = get_namespace_oid("pgmq", false);
		bool sampled = false;
		bool have_sample = false;
		core::SendRateSample sample = {0, 0};
		for (uint64 i = 0; i < rows; i++) {
			Datum values[kStatusColumns];
			bool nulls[kStatusColumns];
			heap_deform_tuple(status->vals[i], status->tupdesc, values, nulls);
			const bool is_queue =
				!nulls[kStatusParentTable] && strcmp(TextDatumGetCString(values[kStatusParentTable]), queue_parent) == 0;
			const Oid parent = is_queue ? queue.queue_relid : get_relname_relid(queue.archive_table, namespace_oid);
			int64 default_rows = 0;
			nulls[kStatusDefaultRows] = !DefaultPartitionRows(parent, &default_rows);
			values[kStatusDefaultRows] = Int64GetDatum(default_rows);
			// By msg_id: the runway in ids at the send rate the queue table shows
			// over about one partition_interval of ids (the archive's ids come
			// from the same sequence, so its runway goes by the same rate).
			if (!nulls[kStatusRunwayMessages]) {
				if (!sampled) {
					sampled = true;
					int32 window = 0;
					const char *interval_text =
						nulls[kStatusPartitionInterval] ? "" : TextDatumGetCString(values[kStatusPartitionInterval]);
					RunCore([&] {
						const auto interval = core::ParseInt4(interval_text);
						window = interval && *interval > 0 ? *interval : 0;
					});
					have_sample = window > 0 && SampleSendRate(queue, window, &sample);
				}
				double seconds = 0;
				bool known = false;
				RunCore([&] {
					const std::optional<core::SendRateSample> given =
						have_sample ? std::optional<core::SendRateSample>(sample) : std::nullopt;
					const std::optional<double> runway =
						core::RunwaySeconds(DatumGetInt64(values[kStatusRunwayMessages]), given);
					known = runway.has_value();
					seconds = runway.value_or(0);
				});
				nulls[kStatusRunwaySeconds] = !known;
				values[kStatusRunwaySeconds] = Float8GetDatum(seconds);
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	SpiFinish();
	return Datum(0);
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
			if (plan.kind == core::PartitionKind::ByTime)
				CheckTimeIntervals(retention_text, partition_text);
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
					const char *grantee =
						CallPostgres([i] { return SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1); });
					const char *privilege =
						CallPostgres([i] { return SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2); });
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
			// pg_partman may stop moving rows it has no partition for: never
			// drop them with the old table (the error undoes the conversion).
			ExecuteOnce(core::AnyRowLeftSql(old));
			bool isnull = true;
			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
				throw core::CoreError(core::ErrorKind::Internal,
				                      "pg_partman left archived messages unmoved; the archive was not converted");
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
