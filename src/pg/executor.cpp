// src/pg/executor.cpp
// SPI plumbing (see executor.hpp).
#include "pgmq/core/error.hpp"

#include "pgmq/pg/executor.hpp"

extern "C" {
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
}

namespace pgmq::pg {

void SpiConnect(bool nonatomic)
{
	const int rc = SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0);
	if (rc != SPI_OK_CONNECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("SPI_connect failed: %s", SPI_result_code_string(rc))));
}

bool NonAtomicCall(FunctionCallInfo fcinfo)
{
	return fcinfo->context != nullptr && IsA(fcinfo->context, CallContext) &&
	       !castNode(CallContext, fcinfo->context)->atomic;
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

void RequireColumnType(TupleDesc actual, int column, Oid expected, const char *table)
{
	if (column < 1 || column > actual->natts)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq result has %d columns, expected at least %d", actual->natts, column)));
	const Form_pg_attribute attribute = TupleDescAttr(actual, column - 1);
	if (attribute->atttypid != expected)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                table ? errmsg("column \"%s\" of table \"pgmq.%s\" has type %s, but pgmq expects %s",
		                               NameStr(attribute->attname), table, format_type_be(attribute->atttypid),
		                               format_type_be(expected))
		                       : errmsg("column \"%s\" of a pgmq result has type %s, but pgmq expects %s",
		                                NameStr(attribute->attname), format_type_be(attribute->atttypid),
		                                format_type_be(expected))));
}

void RequireRowType(TupleDesc actual, TupleDesc expected, const char *table)
{
	// message_record has grown across versions: never store rows of another shape.
	if (actual->natts != expected->natts)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("pgmq result has %d columns, the function's return type has %d", actual->natts,
		                       expected->natts)));
	for (int i = 0; i < expected->natts; i++)
		RequireColumnType(actual, i + 1, TupleDescAttr(expected, i)->atttypid, table);
}

Datum ResultValue(uint64 row, int column, Oid expected, bool *isnull, const char *table)
{
	if (row >= SPI_processed)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq result has no row %lu", static_cast<unsigned long>(row))));
	RequireColumnType(SPI_tuptable->tupdesc, column, expected, table);
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column, isnull);
}

void EmitRows(FunctionCallInfo fcinfo, const char *table)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	if (SPI_processed == 0)
		return;
	// Checked once per result, before any row is stored: tuplestore_puttuple
	// copies rows as they are, and the caller decodes them by its own types.
	RequireRowType(SPI_tuptable->tupdesc, rsinfo->setDesc, table);
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
}

}  // namespace pgmq::pg
