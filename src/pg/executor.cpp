// src/pg/executor.cpp
// SPI plumbing (see executor.hpp).
#include "pgmq/core/error.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"

extern "C" {
#include "funcapi.h"
#include "lib/stringinfo.h"
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

namespace {

// Replaces the line SPI gave the error for statement `sql` (SQL statement
// "<its text>") with `label`, or removes it when label is nullptr: pgmq's
// SQL is no help to whoever reads the error. The lines around it (a
// trigger's, the caller's) stay. May ereport (out of memory).
void ReplaceStatementContext(ErrorData *error, const char *sql, const char *label)
{
	if (error->internalquery && strcmp(error->internalquery, sql) == 0) {
		error->internalquery = nullptr;  // a position in our SQL text
		error->internalpos = 0;
	}
	StringInfoData spi_line;
	initStringInfo(&spi_line);
	appendStringInfo(&spi_line, "SQL statement \"%s\"", sql);
	const char *found = error->context ? strstr(error->context, spi_line.data) : nullptr;
	StringInfoData context;
	initStringInfo(&context);
	if (found) {
		appendBinaryStringInfo(&context, error->context, static_cast<int>(found - error->context));
		const char *rest = found + spi_line.len;
		if (label)
			appendStringInfoString(&context, label);
		else if (*rest == '\n')
			rest++;
		else if (context.len > 0 && context.data[context.len - 1] == '\n')
			context.data[--context.len] = '\0';
		appendStringInfoString(&context, rest);
	} else {
		if (error->context)
			appendStringInfo(&context, "%s\n", error->context);
		if (label)
			appendStringInfoString(&context, label);
	}
	error->context = context.len > 0 ? context.data : nullptr;
}

// The context line of a kept plan's errors: "pgmq: reading queue "jobs"".
const char *PlanLabel(SPIPlanPtr plan)
{
	const char *queue_table = nullptr;
	core::Statement statement = core::Statement::Count;
	if (!DescribeCachedPlan(plan, &queue_table, &statement) && !DescribeDeadLetterPlan(plan, &queue_table, &statement))
		return nullptr;
	const core::StatementStep step = core::StepOf(statement);
	if (!core::IsPerQueue(statement))
		return psprintf("pgmq: %s", step.action);
	// q_<name>: the queue's name as its tables have it.
	return psprintf("pgmq: %s queue \"%s\"%s", step.action, queue_table + 2, step.detail);
}

}  // namespace

void ShortenPlanContext(ErrorData *error, SPIPlanPtr plan)
{
	List *sources = SPI_plan_get_plan_sources(plan);
	if (sources == NIL)
		return;
	ReplaceStatementContext(error, static_cast<CachedPlanSource *>(linitial(sources))->query_string, PlanLabel(plan));
}

uint64 ExecutePlan(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	int rc = 0;
	EditingErrors([&] { rc = SPI_execute_plan(plan, values, nulls, false, 0); },
	              [plan](ErrorData *error) { ShortenPlanContext(error, plan); });
	if (rc < 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq statement failed: %s", SPI_result_code_string(rc))));
	return SPI_processed;
}

uint64 ExecuteOnce(const std::string &sql, int nargs, Oid *types, Datum *values, const char *nulls)
{
	int rc = 0;
	try {
		rc = CallPostgres([&] { return SPI_execute_with_args(sql.c_str(), nargs, types, values, nulls, false, 0); });
	} catch (const PostgresError &error) {
		CallPostgres([&] { ReplaceStatementContext(error.data(), sql.c_str(), nullptr); });
		throw;
	}
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
