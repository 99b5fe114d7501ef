// src/pg/entry_lifecycle.cpp
// Queue lifecycle: create, create_non_partitioned, create_unlogged,
// drop_queue, purge_queue, detach_archive, and the name helpers upstream
// exposes (validate_queue_name, format_table_name, acquire_queue_lock).
// A queue "x" is the table pgmq.q_x (messages) with archive pgmq.a_x and a
// row in pgmq.meta.
#include "pgmq/core/ddl.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/policy.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/streams.hpp"

#include <vector>


#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/queue_relations.hpp"
#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// create_non_partitioned / create_unlogged: idempotent for the queue's own
// objects (an existing queue keeps its kind and meta flags); refuses
// relations under its names that pgmq did not make for the caller. The
// meta row comes last: its row-level security policy requires the caller
// to own the queue table.
Datum CreateQueue(FunctionCallInfo fcinfo, core::QueueKind kind)
{
	QueueRef queue;
	core::ExistingRelations existing;
	ReadNewQueueName(fcinfo, 0, &queue);
	RequireCreateOnSchema();
	LockQueueName(queue);
	SpiConnect();
	const Registration registration = FindRegistration(&queue);
	// An existing queue keeps the name it was registered under (its archive
	// index is named after it).
	const Datum name_datum = registration.registered ? registration.name : PG_GETARG_DATUM(0);
	text *name_text = DatumGetTextPP(name_datum);
	queue.name = VARDATA_ANY(name_text);
	queue.name_len = VARSIZE_ANY_EXHDR(name_text);
	CheckRelationsForCreate(queue, false, registration.registered, &existing);
	RunCore([&] {
		const std::string_view name(queue.name, queue.name_len);
		for (const std::string &statement : core::CreateQueueStatements(name, kind, existing))
			ExecuteOnce(statement);
		if (kind == core::QueueKind::Unlogged) {
			Oid table_type[1] = {TEXTOID};
			Datum table[1] = {TextDatum(core::QualifiedTable(queue.queue_table))};
			if (ExecuteOnce(core::UnloggedSequenceSql(), 1, table_type, table) == 1) {
				const char *sequence =
					CallPostgres([] { return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1); });
				ExecuteOnce(core::SetSequenceLoggedSql(sequence));
			}
		}
		RegisterQueue(registration, name_datum, false, kind == core::QueueKind::Unlogged);
	});
	SpiFinish();
	PG_RETURN_VOID();
}

// Removes a queue's pg_partman configuration and template tables, so a queue
// re-created under the same name starts clean. Runs inside RunCore.
void ForgetPartitioning(const Partman &partman, const QueueRef &queue)
{
	Oid types[2] = {TEXTOID, TEXTOID};
	Datum values[2] = {TextDatum(core::PartmanParentName(queue.queue_table)),
	                   TextDatum(core::PartmanParentName(queue.archive_table))};
	const uint64 templates = ExecuteOnce(core::TemplateTablesSql(partman.schema), 2, types, values);
	std::vector<std::string> drops;
	for (uint64 i = 0; i < templates; i++)
		drops.push_back(std::string("DROP TABLE IF EXISTS ") +
		                CallPostgres([&] { return SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1); }));
	ExecuteOnce(core::DeletePartConfigSql(partman.schema), 2, types, values);
	for (const std::string &drop : drops)
		ExecuteOnce(drop);
}

// Whether pg_partman may manage the queue or its archive (a converted
// archive is partitioned under a plain queue). Requires a resolved queue.
bool HasPartitionedTable(const QueueRef &queue)
{
	const Oid archive_relid = get_relname_relid(queue.archive_table, get_rel_namespace(queue.queue_relid));
	return get_rel_relkind(queue.queue_relid) == RELKIND_PARTITIONED_TABLE ||
	       (OidIsValid(archive_relid) && get_rel_relkind(archive_relid) == RELKIND_PARTITIONED_TABLE);
}

// drop_queue: false (with a NOTICE) when the queue table does not exist.
bool DropQueue(FunctionCallInfo fcinfo)
{
	QueueRef queue;
	ReadQueueName(fcinfo, 0, &queue);
	LockQueueName(queue);
	if (!QueueExists(&queue)) {
		ereport(NOTICE, (errmsg("pgmq queue `%.*s` does not exist", queue.name_len, queue.name)));
		return false;
	}
	// Only the owner may drop the tables: say so before touching pgmq.meta,
	// whose row goes first (below).
	RequireRelationOwner(queue.queue_relid);
	const Datum name_datum = PG_GETARG_DATUM(0);
	const std::string_view name(queue.name, queue.name_len);
	// Only a partitioned queue touches pg_partman's configuration: the owner of
	// a plain queue or a stream (partitioned by pgmq itself) need not have any
	// access to partman's schema to drop it.
	const bool partitioned = HasPartitionedTable(queue) && !IsStreamTable(queue.queue_relid);
	Partman partman{};
	SpiConnect();
	if (partitioned)
		FindPartman(&partman);
	RunCore([&] {
		// The rows first, under any spelling of the name: their row-level
		// security lets only the queue table's owner delete them, so the
		// table must still be there.
		ForgetQueueRows(name_datum);
		if (partitioned && partman.installed)
			ForgetPartitioning(partman, queue);
		for (const std::string &statement : core::DropQueueStatements(name))
			ExecuteOnce(statement);
	});
	SpiFinish();
	return true;
}

}  // namespace

// create(queue_name text), create_non_partitioned(queue_name text)
PGMQ_FUNCTION(pgmq_create_non_partitioned) { return CreateQueue(fcinfo, core::QueueKind::Logged); }
// create_unlogged(queue_name text): the queue table is UNLOGGED, the archive is not.
PGMQ_FUNCTION(pgmq_create_unlogged) { return CreateQueue(fcinfo, core::QueueKind::Unlogged); }

// drop_queue(queue_name text) -> boolean
PGMQ_FUNCTION(pgmq_drop_queue) { PG_RETURN_BOOL(DropQueue(fcinfo)); }

// drop_queue(queue_name text, partitioned boolean): deprecated upstream;
// warns, drops, and always returns true as upstream does.
PGMQ_FUNCTION(pgmq_drop_queue_deprecated)
{
	ereport(WARNING, (errmsg("drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. "
	                         "Use drop_queue(queue_name) instead")));
	(void) DropQueue(fcinfo);
	PG_RETURN_BOOL(true);
}

// purge_queue(queue_name text) -> bigint: deletes every message (TRUNCATE,
// so msg_ids continue), returns how many there were. The archive stays.
PGMQ_FUNCTION(pgmq_purge_queue)
{
	QueueRef queue;
	ResolveQueue(fcinfo, 0, &queue);
	int64 count = 0;
	SpiConnect();
	const std::string_view name(queue.name, queue.name_len);
	RunCore([&] { ExecuteOnce(core::LockQueueTableSql(name)); });
	// Under that lock (on its partitions too) nothing can be attached to the
	// table: what is checked is what TRUNCATE runs (its triggers).
	RequireOwnCodeOnly(queue.queue_relid, "queue table", queue.queue_table);
	RunCore([&] {
		ExecuteOnce(core::CountQueueSql(name));
		bool isnull;
		count = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		ExecuteOnce(core::TruncateQueueSql(name));
	});
	// A stream's groups held leases on what is gone.
	if (IsStreamTable(queue.queue_relid)) {
		Oid types[1] = {TEXTOID};
		Datum values[1] = {MetaQueueName(queue)};
		InStreamScope([&] { RunCore([&] { ExecuteOnce(core::ClearLeasesSql(), 1, types, values); }); });
	}
	SpiFinish();
	PG_RETURN_INT64(count);
}

// detach_archive(queue_name text): a no-op since archives stopped being
// extension members (upstream 1.6.0); kept so old callers keep working.
PGMQ_FUNCTION(pgmq_detach_archive)
{
	ereport(WARNING, (errmsg("detach_archive(queue_name) is deprecated and is a no-op. It will be removed in PGMQ v2.0. "
	                         "Archive tables are no longer member objects.")));
	PG_RETURN_VOID();
}

// validate_queue_name(queue_name text): the length rule of create*.
PGMQ_FUNCTION(pgmq_validate_queue_name)
{
	RequireArgument(fcinfo, 0, "queue_name");
	text *name = PG_GETARG_TEXT_PP(0);
	RunCore([name] { core::CheckQueueNameLength(std::string_view(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name))); });
	PG_RETURN_VOID();
}

// format_table_name(queue_name text, prefix text) -> text:
// lower(prefix || '_' || queue_name) after the character check.
PGMQ_FUNCTION(pgmq_format_table_name)
{
	RequireArgument(fcinfo, 0, "queue_name");
	RequireArgument(fcinfo, 1, "prefix");
	text *name = PG_GETARG_TEXT_PP(0);
	text *prefix = PG_GETARG_TEXT_PP(1);
	const std::string_view name_view(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
	const std::string_view prefix_view(VARDATA_ANY(prefix), VARSIZE_ANY_EXHDR(prefix));
	RunCore([&] { core::CheckQueueNameCharacters(name_view); });
	const size_t length = core::WriteTableName(prefix_view, name_view, nullptr, 0);
	char *table = static_cast<char *>(palloc(length + 1));
	core::WriteTableName(prefix_view, name_view, table, length + 1);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(table, length));
}

// acquire_queue_lock(queue_name text): the transaction-scoped advisory lock
// create* and drop_queue take.
PGMQ_FUNCTION(pgmq_acquire_queue_lock)
{
	RequireArgument(fcinfo, 0, "queue_name");
	QueueRef queue;
	text *name = PG_GETARG_TEXT_PP(0);
	queue.name = VARDATA_ANY(name);
	queue.name_len = VARSIZE_ANY_EXHDR(name);
	LockQueueName(queue);
	PG_RETURN_VOID();
}
