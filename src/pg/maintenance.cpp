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
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
}

namespace pgmq::pg {

namespace {

// Copies src into a fixed buffer of cap bytes; a name that does not fit is
// a bug (table names were validated as identifiers).
void CopyName(char *dst, size_t cap, const char *src)
{
	if (strlcpy(dst, src ? src : "", cap) >= cap)  // NOLINT
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq: name too long: \"%s\"", src)));
}

// Fills table's configuration from row `row` of the part_config result.
void ReadPartConfig(MaintainedTable *table, SPITupleTable *config, uint64 row)
{
	HeapTuple tuple = config->vals[row];
	TupleDesc desc = config->tupdesc;
	bool isnull = true;
	CopyName(table->parent, sizeof table->parent, SPI_getvalue(tuple, desc, 1));
	const char *control = SPI_getvalue(tuple, desc, 2);
	if (control == nullptr)
		control = "";
	const char *interval = SPI_getvalue(tuple, desc, 3);
	table->premake = DatumGetInt32(SPI_getbinval(tuple, desc, 4, &isnull));
	const char *retention = SPI_getvalue(tuple, desc, 5);
	table->keeps_tables = DatumGetBool(SPI_getbinval(tuple, desc, 6, &isnull)) && !isnull;
	table->kind = strcmp(control, "msg_id") == 0 ? core::PartitionKind::ById : core::PartitionKind::ByTime;
	table->relid = InvalidOid;
	table->owner = InvalidOid;
	if (table->kind != core::PartitionKind::ById)
		return;
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

// The part_config row of parent pgmq.<table>, or -1.
int64 FindPartConfig(SPITupleTable *config, uint64 rows, const char *table)
{
	for (uint64 i = 0; i < rows; i++) {
		const char *parent = SPI_getvalue(config->vals[i], config->tupdesc, 1);
		if (parent != nullptr && strncmp(parent, "pgmq.", 5) == 0 && strcmp(parent + 5, table) == 0)
			return static_cast<int64>(i);
	}
	return -1;
}

}  // namespace

// Column `column` of the first row of the last SPI result as bool (NULL: false).
bool FirstRowBool(int column)
{
	bool isnull = true;
	const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);
	return !isnull && DatumGetBool(value);
}

void ListMaintainedTables(const Partman &partman, const char *only_queue_table, MemoryContext context,
                          MaintainedTables *list)
{
	uint64 config_rows = 0;
	uint64 queues = 0;
	RunCore([&] { config_rows = ExecuteOnce(core::PartConfigSql(partman.schema)); });
	// SPI keeps each result until SPI_finish.
	SPITupleTable *config = SPI_tuptable;
	RunCore([&] { queues = ExecuteOnce(core::QueueNamesSql()); });
	SPITupleTable *names = SPI_tuptable;
	list->count = 0;
	list->tables = static_cast<MaintainedTable *>(MemoryContextAllocZero(context, sizeof(MaintainedTable) * (2 * queues + 1)));
	for (uint64 i = 0; i < queues; i++) {
		const char *queue_name = SPI_getvalue(names->vals[i], names->tupdesc, 1);
		if (queue_name == nullptr)
			continue;
		char tables[2][NAMEDATALEN];
		Failure failure;
		// The same rule as pgmq.format_table_name, without calling it by name.
		const bool valid = TryCore(failure, [&] {
			const std::string_view name(queue_name);
			core::CheckQueueNameCharacters(name);
			core::WriteQueueTableNames(name, tables[0], tables[1], NAMEDATALEN);
		});
		if (!valid) {
			ereport(WARNING, (errcode(failure.sqlstate), errmsg("pgmq maintenance skips queue \"%s\" listed in pgmq.meta: %s",
			                                                    queue_name, failure.message)));
			continue;
		}
		if (only_queue_table != nullptr && strcmp(tables[0], only_queue_table) != 0)
			continue;
		for (int t = 0; t < 2; t++) {
			const int64 row = FindPartConfig(config, config_rows, tables[t]);
			if (row < 0)
				continue;
			bool isnull = true;
			const bool automatic = DatumGetBool(SPI_getbinval(config->vals[row], config->tupdesc, 7, &isnull)) && !isnull;
			// Without a name only what pg_partman's own run would maintain (so
			// pausing a table works the same); with one, whatever the setting,
			// as run_maintenance(parent) does.
			if (only_queue_table == nullptr && !automatic)
				continue;
			MaintainedTable *table = &list->tables[list->count++];
			table->queue_name = MemoryContextStrdup(context, queue_name);
			CopyName(table->table, sizeof table->table, tables[t]);
			CopyName(table->queue_table, sizeof table->queue_table, tables[0]);
			table->is_archive = t == 1;
			ReadPartConfig(table, config, static_cast<uint64>(row));
		}
	}
}

bool CheckMaintainedTable(MaintainedTable *table, char *why, size_t cap, int *sqlstate)
{
	table->relid = InvalidOid;
	table->owner = InvalidOid;
	*sqlstate = ERRCODE_WRONG_OBJECT_TYPE;
	const Oid pgmq_namespace = get_namespace_oid("pgmq", false);
	const Oid relid = get_relname_relid(table->table, pgmq_namespace);
	const char relkind = OidIsValid(relid) ? get_rel_relkind(relid) : '\0';
	const Oid owner = OidIsValid(relid) ? RelationOwner(relid) : InvalidOid;
	if (!OidIsValid(owner)) {
		*sqlstate = ERRCODE_UNDEFINED_TABLE;
		snprintf(why, cap, "it does not exist");
		return false;
	}
	if (relkind != RELKIND_PARTITIONED_TABLE) {
		snprintf(why, cap, "it is %s, not a partitioned table", RelkindName(relkind));
		return false;
	}
	// Running as the owner is the point; only a role that has the owner's
	// privileges may make maintenance do that (as only an owner may VACUUM).
	if (!has_privs_of_role(GetUserId(), owner)) {
		*sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
		snprintf(why, cap, "it belongs to role \"%s\", whose privileges role \"%s\" does not have",
		         GetUserNameFromId(owner, true), GetUserNameFromId(GetUserId(), true));
		return false;
	}
	if (table->is_archive) {
		// Premaking an archive reads the queue's table.
		const Oid queue_relid = get_relname_relid(table->queue_table, pgmq_namespace);
		const char queue_relkind = OidIsValid(queue_relid) ? get_rel_relkind(queue_relid) : '\0';
		if (queue_relkind != RELKIND_RELATION && queue_relkind != RELKIND_PARTITIONED_TABLE) {
			snprintf(why, cap, "the queue's own table is %s", OidIsValid(queue_relid) ? RelkindName(queue_relkind) : "missing");
			return false;
		}
		if (RelationOwner(queue_relid) != owner) {
			*sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			snprintf(why, cap, "the queue's own table has another owner");
			return false;
		}
	}
	char default_name[NAMEDATALEN + 16];
	RunCore([&] { strlcpy(default_name, core::DefaultPartitionName(table->table).c_str(), sizeof default_name); });
	const Oid default_relid = get_relname_relid(default_name, pgmq_namespace);
	if (OidIsValid(default_relid) &&
	    (get_rel_relkind(default_relid) != RELKIND_RELATION || RelationOwner(default_relid) != owner ||
	     !get_rel_relispartition(default_relid) || get_partition_parent(default_relid, true) != relid)) {
		snprintf(why, cap, "pgmq.%s is not its default partition", default_name);
		return false;
	}
	table->relid = relid;
	table->owner = owner;
	return true;
}

void CommitBetweenTables(Commits mode)
{
	// SPI keeps every result until SPI_finish: a new connection per table
	// (and per recovery batch) keeps a long run's memory flat.
	switch (mode) {
	case Commits::None:
		SpiFinish();
		SpiConnect();
		break;
	case Commits::Procedure: {
		SPI_commit();
		SpiFinish();
		const int rc = SPI_connect_ext(SPI_OPT_NONATOMIC);
		if (rc != SPI_OK_CONNECT)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_connect failed: %s", SPI_result_code_string(rc))));
		break;
	}
	case Commits::Worker:
		SpiFinish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SpiConnect();
		break;
	}
}

bool RunPartmanMaintenance(const Partman &partman, const MaintainedTable &table, const char *hold_table_timeout_ms)
{
	bool granted = false;
	AsTableOwner(table, [&] {
		RunCore([&] {
			ExecuteOnce(core::TryPartmanMaintenanceLockSql());
			granted = FirstRowBool(1);
			if (!granted)
				return;
			Oid types[1] = {TEXTOID};
			if (hold_table_timeout_ms != nullptr) {
				Datum timeout[1] = {TextDatum(hold_table_timeout_ms)};
				ExecuteOnce(core::SetLocalLockTimeoutSql(), 1, types, timeout);
				ExecuteOnce(core::LockTableShareSql(table.table));
			}
			Datum values[1] = {TextDatum(table.parent)};
			ExecuteOnce(core::RunPartmanMaintenanceSql(partman.schema), 1, types, values);
		});
	});
	return granted;
}

namespace {

// WARNING for a failed maintenance step of table, with the first line of
// error's message (and a hint to recover when the default partition has
// rows).
void WarnMaintenanceFailed(const MaintainedTable &table, const char *step, const ErrorData *error)
{
	const char *message = error->message ? error->message : "unknown error";
	const int first_line = FirstLineLength(message);
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

}  // namespace

void NotPartitioned(const QueueRef &queue)
{
	ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
	                errmsg("queue \"%.*s\" is not partitioned", queue.name_len, queue.name),
	                errdetail("pg_partman manages neither pgmq.%s nor pgmq.%s.", queue.queue_table, queue.archive_table)));
}

bool DefaultPartitionExists(const std::string &default_table)
{
	Oid types[1] = {TEXTOID};
	Datum values[1] = {TextDatum(core::QualifiedTable(default_table))};
	ExecuteOnce(core::RelationExistsSql(), 1, types, values);
	return FirstRowBool(1);
}

bool DefaultPartitionHasRows(const MaintainedTable &table)
{
	bool has_rows = false;
	AsTableOwner(table, [&] {
		RunCore([&] {
			const std::string default_table = core::DefaultPartitionName(table.table);
			if (!DefaultPartitionExists(default_table))
				return;
			ExecuteOnce(core::DefaultHasRowsSql(default_table));
			has_rows = FirstRowBool(1);
		});
	});
	return has_rows;
}

void MaintainTables(const Partman &partman, MaintainedTables *list, Commits mode, MaintenanceTally *tally)
{
	for (int i = 0; i < list->count; i++) {
		MaintainedTable &table = list->tables[i];
		CHECK_FOR_INTERRUPTS();
		tally->tables++;
		// Checked before anything touches the table; one WARNING when skipped.
		char why[2 * NAMEDATALEN + 128];
		int sqlstate = 0;
		bool checked = false;
		ErrorData *error = InSubtransaction([&] {
			checked = CheckMaintainedTable(&table, why, sizeof why, &sqlstate);
			// As the owner, the rule refuses only code of yet another role.
			const char *kind = table.is_archive ? "archive table" : "queue table";
			if (checked)
				AsTableOwner(table, [&] { RequireOwnCodeOnly(table.relid, kind, table.table); }, true);
		});
		if (error != nullptr || !checked) {
			if (error != nullptr) {
				sqlstate = error->sqlerrcode;
				strlcpy(why, error->message ? error->message : "unknown error", sizeof why);
			}
			ereport(WARNING, (errcode(sqlstate), errmsg("pgmq maintenance skips %s (queue \"%s\"): %s", table.parent,
			                                            table.queue_name, why)));
			tally->skipped++;
			CommitBetweenTables(mode);
			continue;
		}
		bool failed = false;
		bool granted = true;
		error = InSubtransaction([&] { granted = RunPartmanMaintenance(partman, table); });
		if (error) {
			WarnMaintenanceFailed(table, "pg_partman maintenance", error);
			failed = true;
		} else if (!granted) {
			// Any role can hold that lock: waiting for it would let one stall
			// every table. pg_partman's own run skips the same way.
			ereport(WARNING, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			                  errmsg("pg_partman maintenance of queue \"%s\" skipped for %s: another session holds "
			                         "pg_partman's maintenance lock",
			                         table.queue_name, table.parent),
			                  errdetail("The next run tries again; premaking from the sequence goes on.")));
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
		if (failed)
			tally->failures++;
		CommitBetweenTables(mode);
	}
}

}  // namespace pgmq::pg
