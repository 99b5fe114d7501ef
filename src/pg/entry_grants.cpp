// src/pg/entry_grants.cpp
// grant_queue_access(queue_name, role_name, archive): grants one role what
// it needs to use one queue (see core/grants.hpp and docs/permissions.md),
// so new queues do not need hand-written GRANTs. Runs with the caller's
// rights: the caller must be able to grant on the queue's tables (their
// owner, or a role holding the privileges WITH GRANT OPTION).
#include "pgmq/core/error.hpp"
#include "pgmq/core/grants.hpp"
#include "pgmq/core/queue_name.hpp"

#include <vector>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// What ReadGrantCheck found, in Postgres memory (no C++ objects).
struct GrantCheckRow {
	bool flags[core::kGrantCheckColumns];
	char *sequence;       // nullptr: none
	char **functions;     // qualified signatures of the routines to grant
	int function_count;
};

// Reads the one row of GrantCheckSql. Requires SPI; may ereport.
void ReadGrantCheck(GrantCheckRow *row)
{
	if (SPI_processed != 1 || SPI_tuptable->tupdesc->natts != core::kGrantCheckColumns)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("grant check returned an unexpected shape")));
	HeapTuple tuple = SPI_tuptable->vals[0];
	row->sequence = nullptr;
	row->functions = nullptr;
	row->function_count = 0;
	for (int column = 1; column <= core::kGrantCheckColumns; column++) {
		bool isnull;
		const Datum value = SPI_getbinval(tuple, SPI_tuptable->tupdesc, column, &isnull);
		row->flags[column - 1] = false;
		if (column == 2) {
			if (isnull)
				continue;
			Datum *oids;
			int count;
			deconstruct_array(DatumGetArrayTypeP(value), OIDOID, sizeof(Oid), true, TYPALIGN_INT, &oids, nullptr, &count);
			row->functions = static_cast<char **>(palloc(sizeof(char *) * (count + 1)));
			// Always schema- and type-qualified, whatever the search_path.
			for (int i = 0; i < count; i++)
				row->functions[i] = format_procedure_qualified(DatumGetObjectId(oids[i]));
			row->function_count = count;
		} else if (column == 3)
			row->sequence = isnull ? nullptr : TextDatumGetCString(value);
		else
			row->flags[column - 1] = !isnull && DatumGetBool(value);
	}
}

}  // namespace

// grant_queue_access(queue_name text, role_name text, archive boolean DEFAULT true) -> void
PGMQ_FUNCTION(pgmq_grant_queue_access)
{
	QueueRef queue;
	ResolveQueue(fcinfo, 0, &queue);
	RequireArgument(fcinfo, 1, "role_name");
	RequireArgument(fcinfo, 2, "archive");
	const char *role_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	// An unknown role is an error (42704), never a grant to whatever GRANT
	// would read the name as: "public" means PUBLIC to GRANT even quoted.
	const Oid role = get_role_oid(role_name, false);
	const bool archive = PG_GETARG_BOOL(2);
	const char *queue_table = quote_qualified_identifier("pgmq", queue.queue_table);
	const char *archive_table = quote_qualified_identifier("pgmq", queue.archive_table);
	SpiConnect();
	// A read of a queue with a dead-letter policy inserts into its dead-letter queue.
	QueuePolicy policy;
	LoadPolicy(queue, &policy);
	QueueRef dead_letter;
	const char *dead_letter_table = nullptr;
	if (policy.dead_letter && FindQueueQuietly(policy.dead_letter_queue, static_cast<int>(strlen(policy.dead_letter_queue)), &dead_letter))
		dead_letter_table = quote_qualified_identifier("pgmq", dead_letter.queue_table);
	Oid types[4] = {OIDOID, TEXTOID, TEXTOID, TEXTOID};
	Datum values[4] = {ObjectIdGetDatum(role), CStringGetTextDatum(queue_table), CStringGetTextDatum(archive_table),
	                   dead_letter_table ? CStringGetTextDatum(dead_letter_table) : Datum(0)};
	const char nulls[4] = {' ', ' ', ' ', NullFlag(dead_letter_table == nullptr)};
	GrantCheckRow row;
	RunCore([&] { ExecuteOnce(core::GrantCheckSql(), 4, types, values, nulls); });
	ReadGrantCheck(&row);
	RunCore([&] {
		const bool *flags = row.flags;
		const core::GrantCheck check{flags[0],
		                             std::vector<std::string>(row.functions, row.functions + row.function_count),
		                             row.sequence ? row.sequence : "",
		                             flags[3],
		                             flags[4],
		                             flags[5],
		                             flags[6],
		                             flags[7],
		                             dead_letter_table ? dead_letter_table : "",
		                             flags[8],
		                             flags[9]};
		for (const std::string &statement :
		     core::GrantQueueAccessStatements(std::string_view(queue.name, queue.name_len), role_name, archive, check))
			ExecuteOnce(statement);
	});
	SpiFinish();
	PG_RETURN_VOID();
}
