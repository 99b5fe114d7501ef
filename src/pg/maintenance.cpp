// src/pg/maintenance.cpp
// Partition maintenance of partitioned queues, table by table (see
// maintenance.hpp and core/maintenance.hpp).
#include "pgmq/core/integers.hpp"
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/queue_name.hpp"

#include <algorithm>
#include <vector>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
}

namespace pgmq::pg {

namespace {

// Column `column` of row `row` of the last SPI result as text, or nullptr
// for NULL. Allocated in the current context. From C++ code: may throw.
const char *ValueText(uint64 row, int column)
{
	return CallPostgres([&] { return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column); });
}

// Column `column` of the first row of the last SPI result as int8, if not NULL.
std::optional<int64_t> ValueInt8(int column)
{
	bool isnull = true;
	const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);
	if (isnull)
		return std::nullopt;
	return DatumGetInt64(value);
}

bool ValueBool(int column)
{
	bool isnull = true;
	const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);
	return !isnull && DatumGetBool(value);
}

// A bigint[] of values, in the current context. May throw.
Datum Int8ArrayDatum(const std::vector<int64_t> &values)
{
	return CallPostgres([&] {
		Datum *elements = static_cast<Datum *>(palloc(sizeof(Datum) * std::max<size_t>(values.size(), 1)));
		for (size_t i = 0; i < values.size(); i++)
			elements[i] = Int64GetDatum(values[i]);
		return PointerGetDatum(construct_array(elements, static_cast<int>(values.size()), INT8OID, sizeof(int64),
		                                       FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	});
}

// Copies src into a fixed buffer of cap bytes; a name that does not fit is
// a bug (table names were validated as identifiers).
void CopyName(char *dst, size_t cap, const char *src)
{
	if (strlcpy(dst, src ? src : "", cap) >= cap)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq: name too long: \"%s\"", src)));
}

}  // namespace

void ListMaintainedTables(const Partman &partman, text *queue_name, MemoryContext context, MaintainedTables *list)
{
	uint64 rows = 0;
	RunCore([&] {
		Oid types[1] = {TEXTOID};
		Datum values[1] = {PointerGetDatum(queue_name)};
		const char nulls[1] = {NullFlag(queue_name == nullptr)};
		rows = ExecuteOnce(core::MaintainedTablesSql(partman.schema), 1, types, values, nulls);
	});
	list->count = static_cast<int>(rows);
	list->tables = static_cast<MaintainedTable *>(MemoryContextAllocZero(context, sizeof(MaintainedTable) * (rows + 1)));
	for (uint64 i = 0; i < rows; i++) {
		MaintainedTable *table = &list->tables[i];
		HeapTuple row = SPI_tuptable->vals[i];
		TupleDesc desc = SPI_tuptable->tupdesc;
		bool isnull;
		table->queue_name = MemoryContextStrdup(context, SPI_getvalue(row, desc, 1));
		CopyName(table->parent, sizeof table->parent, SPI_getvalue(row, desc, 2));
		CopyName(table->table, sizeof table->table, SPI_getvalue(row, desc, 3));
		CopyName(table->queue_table, sizeof table->queue_table, SPI_getvalue(row, desc, 4));
		table->is_archive = DatumGetBool(SPI_getbinval(row, desc, 5, &isnull));
		const char *control = SPI_getvalue(row, desc, 6);
		if (control == nullptr)
			control = "";
		const char *interval = SPI_getvalue(row, desc, 7);
		table->premake = DatumGetInt32(SPI_getbinval(row, desc, 8, &isnull));
		const char *retention = SPI_getvalue(row, desc, 9);
		table->keeps_tables = DatumGetBool(SPI_getbinval(row, desc, 10, &isnull)) && !isnull;
		table->kind = strcmp(control, "msg_id") == 0 ? core::PartitionKind::ById : core::PartitionKind::ByTime;
		if (table->kind == core::PartitionKind::ById) {
			RunCore([&] {
				const std::optional<int64_t> step = core::ParseInt8(interval ? interval : "");
				const std::optional<int64_t> keep = retention ? core::ParseInt8(retention) : std::nullopt;
				// A table whose configuration is not what create_partitioned
				// writes is left to pg_partman alone.
				if (!step || *step <= 0)
					table->kind = core::PartitionKind::ByTime;
				table->step = step.value_or(0);
				table->has_retention = keep && *keep >= 0;
				table->retention = keep.value_or(0);
			});
		}
	}
}

void CommitBetweenTables(Commits mode)
{
	// SPI keeps every result until SPI_finish: a new connection per table
	// (and per recovery batch) keeps a long run's memory flat.
	switch (mode) {
	case Commits::kNone:
		SpiFinish();
		SpiConnect();
		break;
	case Commits::kProcedure: {
		SPI_commit();
		SpiFinish();
		const int rc = SPI_connect_ext(SPI_OPT_NONATOMIC);
		if (rc != SPI_OK_CONNECT)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_connect failed: %s", SPI_result_code_string(rc))));
		break;
	}
	case Commits::kWorker:
		SpiFinish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SpiConnect();
		break;
	}
}

void RunPartmanMaintenance(const Partman &partman, const MaintainedTable &table, const char *hold_table_timeout_ms)
{
	RunCore([&] {
		ExecuteOnce(core::WaitForPartmanMaintenanceLockSql());
		Oid types[1] = {TEXTOID};
		if (hold_table_timeout_ms != nullptr) {
			Datum timeout[1] = {TextDatum(hold_table_timeout_ms)};
			ExecuteOnce(core::SetLocalLockTimeoutSql(), 1, types, timeout);
			ExecuteOnce(core::LockTableShareSql(table.table));
		}
		Datum values[1] = {TextDatum(table.parent)};
		ExecuteOnce(core::RunPartmanMaintenanceSql(partman.schema), 1, types, values);
	});
}

Partitions ExistingPartitions(const MaintainedTable &table)
{
	Oid types[1] = {TEXTOID};
	Datum values[1] = {TextDatum(core::QualifiedTable(table.table))};
	const uint64 rows = ExecuteOnce(core::IdPartitionsSql(), 1, types, values);
	Partitions partitions;
	for (uint64 i = 0; i < rows; i++) {
		const char *start = ValueText(i, 2);
		if (start)  // NULL: the default partition
			partitions.emplace_back(core::ParseInt8(start).value_or(0), ValueText(i, 1));
	}
	std::sort(partitions.begin(), partitions.end());
	return partitions;
}

core::IdPosition ReadIdPosition(const MaintainedTable &table)
{
	Oid types[1] = {TEXTOID};
	Datum default_name[1] = {TextDatum(core::QualifiedTable(core::DefaultPartitionName(table.table)))};
	ExecuteOnce(core::RelationExistsSql(), 1, types, default_name);
	const bool has_default = ValueBool(1);
	Datum queue_table[1] = {TextDatum(core::QualifiedTable(table.queue_table))};
	ExecuteOnce(core::IdPositionSql(table.queue_table, table.table, table.is_archive, has_default), 1, types,
	            queue_table);
	core::IdPosition position;
	position.step = table.step;
	position.premake = table.premake;
	position.last_id = ValueInt8(1);
	position.oldest_queued = ValueInt8(2);
	position.default_max = ValueInt8(3);
	return position;
}

int64 CreatePartitions(const Partman &partman, const MaintainedTable &table, const std::vector<int64_t> &starts)
{
	if (starts.empty())
		return 0;
	Oid types[2] = {TEXTOID, INT8ARRAYOID};
	Datum values[2] = {TextDatum(table.parent), Int8ArrayDatum(starts)};
	ExecuteOnce(core::CreateIdPartitionsSql(partman.schema, partman.major_version), 2, types, values);
	return static_cast<int64>(starts.size());
}

std::vector<int64_t> PartitionStarts(const Partitions &partitions)
{
	std::vector<int64_t> starts;
	for (const auto &partition : partitions)
		starts.push_back(partition.first);
	return starts;
}

void MaintainFromSequence(const Partman &partman, const MaintainedTable &table, bool apply_retention, int64 *created,
                          int64 *dropped)
{
	int64 made = 0;
	int64 removed = 0;
	RunCore([&] {
		const core::IdPosition position = ReadIdPosition(table);
		const Partitions existing = ExistingPartitions(table);
		std::vector<int64_t> starts = PartitionStarts(existing);
		const std::vector<int64_t> missing = core::PremakeStarts(position, starts);
		made = CreatePartitions(partman, table, missing);
		if (!apply_retention || !table.has_retention || table.keeps_tables)
			return;
		starts.insert(starts.end(), missing.begin(), missing.end());
		for (int64_t start : core::RetentionDrops(position, table.retention, starts)) {
			// Retention lines lie below every premade partition: each is an existing one.
			const auto it = std::lower_bound(existing.begin(), existing.end(), std::pair<int64_t, std::string>(start, ""));
			if (it == existing.end() || it->first != start)
				continue;
			ExecuteOnce(core::PartitionIsEmptySql(it->second));
			if (!ValueBool(1))
				continue;
			ExecuteOnce(core::DropPartitionSql(it->second));
			removed++;
		}
	});
	*created += made;
	*dropped += removed;
}

bool DefaultPartitionHasRows(const MaintainedTable &table)
{
	bool has_rows = false;
	RunCore([&] {
		const std::string default_table = core::DefaultPartitionName(table.table);
		Oid types[1] = {TEXTOID};
		Datum values[1] = {TextDatum(core::QualifiedTable(default_table))};
		ExecuteOnce(core::RelationExistsSql(), 1, types, values);
		if (!ValueBool(1))
			return;
		ExecuteOnce(core::DefaultHasRowsSql(default_table));
		has_rows = ValueBool(1);
	});
	return has_rows;
}

void WarnMaintenanceFailed(const MaintainedTable &table, const char *step, const ErrorData *error)
{
	const char *message = error->message ? error->message : "unknown error";
	const int first_line = static_cast<int>(strcspn(message, "\n"));
	bool spilled = false;
	// Asking must not turn a warning into an error.
	if (InSubtransaction([&] { spilled = DefaultPartitionHasRows(table); }) != nullptr)
		spilled = false;
	if (spilled)
		ereport(WARNING,
		        (errcode(error->sqlerrcode),
		         errmsg("%s of queue \"%s\" failed for %s: %.*s", step, table.queue_name, table.parent, first_line, message),
		         errdetail("Messages sit in its default partition pgmq.%s_default: the queue overran its partitions.",
		                   table.table),
		         errhint("Run CALL pgmq.recover_partitioned_queue('%s'); outside a transaction block.", table.queue_name)));
	else
		ereport(WARNING, (errcode(error->sqlerrcode), errmsg("%s of queue \"%s\" failed for %s: %.*s", step,
		                                                     table.queue_name, table.parent, first_line, message)));
}

void MaintainTables(const Partman &partman, const MaintainedTables &list, Commits mode, MaintenanceTally *tally)
{
	for (int i = 0; i < list.count; i++) {
		const MaintainedTable &table = list.tables[i];
		CHECK_FOR_INTERRUPTS();
		bool failed = false;
		ErrorData *error = InSubtransaction([&] { RunPartmanMaintenance(partman, table); });
		if (error) {
			WarnMaintenanceFailed(table, "pg_partman maintenance", error);
			failed = true;
		}
		if (table.kind == core::PartitionKind::ById) {
			int64 created = 0;
			int64 dropped = 0;
			error = InSubtransaction([&] { MaintainFromSequence(partman, table, true, &created, &dropped); });
			if (error) {
				WarnMaintenanceFailed(table, "premaking from the sequence", error);
				failed = true;
			} else {
				tally->created += created;
				tally->dropped += dropped;
			}
		}
		// Premaking above a spill makes pg_partman's maintenance succeed again
		// while the spilled messages stay in the default partition: say so
		// on every run until the queue is recovered.
		bool spilled = false;
		if (!failed && InSubtransaction([&] { spilled = DefaultPartitionHasRows(table); }) == nullptr && spilled) {
			ereport(WARNING, (errmsg("queue \"%s\" has messages in the default partition pgmq.%s_default",
			                         table.queue_name, table.table),
			                  errdetail("The queue overran its partitions; new messages go to partitions again, "
			                            "but these stay there until they are moved."),
			                  errhint("Run CALL pgmq.recover_partitioned_queue('%s'); outside a transaction block.",
			                          table.queue_name)));
			tally->spilled++;
		}
		tally->tables++;
		if (failed)
			tally->failures++;
		CommitBetweenTables(mode);
	}
}

}  // namespace pgmq::pg
