// src/pg/partman.cpp
// pg_partman discovery (see partman.hpp).
#include "pgmq/core/error.hpp"
#include "pgmq/core/partition.hpp"

#include "pgmq/pg/partman.hpp"

#include "pgmq/pg/executor.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
}

namespace pgmq::pg {

void FindPartman(Partman *partman)
{
	partman->installed = false;
	partman->schema[0] = '\0';
	partman->major_version = 0;
	const int rc = SPI_execute("SELECT n.nspname::pg_catalog.text, e.extversion FROM pg_catalog.pg_extension e "
	                           "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace "
	                           "WHERE e.extname OPERATOR(pg_catalog.=) 'pg_partman'",
	                           true, 1);
	if (rc != SPI_OK_SELECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pg_partman lookup failed: %s", SPI_result_code_string(rc))));
	if (SPI_processed == 0)
		return;
	partman->installed = true;
	strlcpy(partman->schema, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), sizeof partman->schema);
	partman->major_version = atoi(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
}

void RequirePartman(const Partman &partman)
{
	if (!partman.installed)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("pg_partman is required for partitioned queues"),
		                errhint("CREATE EXTENSION pg_partman, then call create_partitioned again.")));
}

void CheckTimeIntervals(const char *retention_interval, const char *partition_interval)
{
	Oid types[2] = {TEXTOID, TEXTOID};
	Datum values[2] = {TextDatum(retention_interval), TextDatum(core::IntervalDuration(partition_interval))};
	ExecuteOnce(core::CheckIntervalsSql(), 2, types, values);
	bool isnull = true;
	if (DatumGetBool(CallPostgres([&] { return ResultValue(0, 1, BOOLOID, &isnull); })))
		throw core::CoreError(core::ErrorKind::InvalidParameter,
		                      std::string("retention_interval '") + retention_interval +
		                          "' is shorter than partition_interval '" + partition_interval +
		                          "': it must keep at least one partition");
}

std::string DefaultTimeRetention(const char *partition_interval)
{
	Oid types[1] = {TEXTOID};
	Datum values[1] = {TextDatum(core::IntervalDuration(partition_interval))};
	ExecuteOnce(core::DefaultTimeRetentionSql(), 1, types, values);
	bool isnull = true;
	return CallPostgres([&] { return TextDatumGetCString(ResultValue(0, 1, TEXTOID, &isnull)); });
}

}  // namespace pgmq::pg
