// src/pg/entry_grants.cpp
// grant_queue_access(queue_name, role_name, archive): grants one role what
// it needs to use one queue (see core/grants.hpp and docs/permissions.md),
// so new queues do not need hand-written GRANTs. Runs with the caller's
// rights: the caller must be able to grant on the queue's tables (their
// owner, or a role holding the privileges WITH GRANT OPTION).
#include "pgmq/core/error.hpp"
#include "pgmq/core/grants.hpp"
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/acl.h"
#include "utils/builtins.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// Reads the one row of GrantCheckSql. Requires SPI; may ereport.
void ReadGrantCheck(bool *flags, char **sequence)
{
	if (SPI_processed != 1 || SPI_tuptable->tupdesc->natts != core::kGrantCheckColumns)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("grant check returned an unexpected shape")));
	HeapTuple row = SPI_tuptable->vals[0];
	for (int column = 1; column <= core::kGrantCheckColumns; column++) {
		bool isnull;
		const Datum value = SPI_getbinval(row, SPI_tuptable->tupdesc, column, &isnull);
		if (column == 3)
			*sequence = isnull ? nullptr : TextDatumGetCString(value);
		else
			flags[column - 1] = !isnull && DatumGetBool(value);
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
	Oid types[3] = {OIDOID, TEXTOID, TEXTOID};
	Datum values[3] = {ObjectIdGetDatum(role), CStringGetTextDatum(queue_table), CStringGetTextDatum(archive_table)};
	bool flags[core::kGrantCheckColumns] = {};
	char *sequence = nullptr;
	SpiConnect();
	RunCore([&] { ExecuteOnce(core::GrantCheckSql(), 3, types, values); });
	ReadGrantCheck(flags, &sequence);
	RunCore([&] {
		const core::GrantCheck check{flags[0], flags[1], sequence ? sequence : "", flags[3],
		                             flags[4],  flags[5], flags[6],                flags[7]};
		for (const std::string &statement :
		     core::GrantQueueAccessStatements(std::string_view(queue.name, queue.name_len), role_name, archive, check))
			ExecuteOnce(statement);
	});
	SpiFinish();
	PG_RETURN_VOID();
}
