// src/pg/executor.cpp
// SPI plumbing (see executor.hpp).
#include "pgmq/core/error.hpp"

#include "pgmq/pg/executor.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
}

namespace pgmq::pg {

void SpiConnect()
{
	const int rc = SPI_connect();
	if (rc != SPI_OK_CONNECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_connect failed: %s", SPI_result_code_string(rc))));
}

void SpiFinish()
{
	const int rc = SPI_finish();
	if (rc != SPI_OK_FINISH)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_finish failed: %s", SPI_result_code_string(rc))));
}

uint64 ExecutePlan(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	const int rc = SPI_execute_plan(plan, values, nulls, false, 0);
	if (rc < 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq statement failed: %s", SPI_result_code_string(rc))));
	return SPI_processed;
}

uint64 ExecuteOnce(const std::string &sql, int nargs, Oid *types, Datum *values, const char *nulls)
{
	const int rc = CallPostgres([&] { return SPI_execute_with_args(sql.c_str(), nargs, types, values, nulls, false, 0); });
	if (rc < 0)
		throw core::CoreError(core::ErrorKind::Internal, std::string("pgmq statement failed: ") + SPI_result_code_string(rc));
	return SPI_processed;
}

Datum TextDatum(const std::string &s)
{
	return PointerGetDatum(CallPostgres([&] { return cstring_to_text_with_len(s.data(), static_cast<int>(s.size())); }));
}

void BeginRowsResult(FunctionCallInfo fcinfo)
{
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
}

void EmitRows(FunctionCallInfo fcinfo)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	if (SPI_processed == 0)
		return;
	// message_record has grown across versions: never store rows of another shape.
	if (SPI_tuptable->tupdesc->natts != rsinfo->setDesc->natts)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq result has %d columns, the function's return type has %d",
		                       SPI_tuptable->tupdesc->natts, rsinfo->setDesc->natts)));
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
}

}  // namespace pgmq::pg
