// src/pg/entry_internal.cpp
// Upstream's internal helpers that clients and tests still call
// (_get_partition_col, _get_pg_partman_schema, _get_pg_partman_major_version,
// _ensure_pg_partman_installed). They answer from the same code the
// partitioned-queue functions use, so they cannot disagree with them.
#include "pgmq/core/integers.hpp"
#include "pgmq/core/partition.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/partman.hpp"
#include "pgmq/pg/queue.hpp"

extern "C" {
#include "utils/builtins.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// pg_partman as installed in this database. May ereport.
void LookUpPartman(Partman *partman)
{
	SpiConnect();
	FindPartman(partman);
	SpiFinish();
}

}  // namespace

// _get_partition_col(partition_interval text) -> 'msg_id' when the interval
// is an int4 (create_partitioned partitions by id), else 'enqueued_at'.
PGMQ_FUNCTION(pgmq_get_partition_col)
{
	RequireArgument(fcinfo, 0, "partition_interval");
	text *interval = PG_GETARG_TEXT_PP(0);
	const std::string_view view(VARDATA_ANY(interval), VARSIZE_ANY_EXHDR(interval));
	bool by_id = false;
	RunCore([&] { by_id = core::ParseInt4(view).has_value(); });
	PG_RETURN_TEXT_P(cstring_to_text(by_id ? "msg_id" : "enqueued_at"));
}

// _get_pg_partman_schema() -> the schema pg_partman is installed in, or NULL.
PGMQ_FUNCTION(pgmq_get_pg_partman_schema)
{
	Partman partman;
	LookUpPartman(&partman);
	if (!partman.installed)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(partman.schema));
}

// _get_pg_partman_major_version() -> pg_partman's major version, or NULL.
PGMQ_FUNCTION(pgmq_get_pg_partman_major_version)
{
	Partman partman;
	LookUpPartman(&partman);
	if (!partman.installed)
		PG_RETURN_NULL();
	PG_RETURN_INT32(partman.major_version);
}

// _ensure_pg_partman_installed(): ERROR unless pg_partman is installed.
PGMQ_FUNCTION(pgmq_ensure_pg_partman_installed)
{
	Partman partman;
	LookUpPartman(&partman);
	RequirePartman(partman);
	PG_RETURN_VOID();
}
