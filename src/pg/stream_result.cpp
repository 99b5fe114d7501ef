// src/pg/stream_result.cpp
// Plans whose rows stream into the function's result (see stream_result.hpp).
// The receiver is PostgreSQL's own tuplestore receiver, given the function's
// result descriptor as the target: at executor startup it compares the
// statement's columns with it by position (count and type), as PL/pgSQL's
// RETURN QUERY does, and raises 42804 on a mismatch before any row is stored.
#include "pgmq/pg/stream_result.hpp"

extern "C" {
#include "executor/tstoreReceiver.h"
#include "funcapi.h"
#include "nodes/params.h"
#include "tcop/dest.h"
}

namespace pgmq::pg {

uint64 ExecutePlanIntoResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values, const char *nulls)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
	const int nargs = SPI_getargcount(plan);
	ParamListInfo params = makeParamList(nargs);
	for (int i = 0; i < nargs; i++) {
		ParamExternData &param = params->params[i];
		param.value = values[i];
		param.isnull = nulls[i] == 'n';
		param.pflags = PARAM_FLAG_CONST;
		param.ptype = SPI_getargtypeid(plan, i);
	}
	DestReceiver *dest = CreateDestReceiver(DestTuplestore);
	SetTuplestoreDestReceiverParams(dest, rsinfo->setResult, rsinfo->econtext->ecxt_per_query_memory, false,
	                                rsinfo->setDesc, "structure of query does not match function result type");
	SPIExecuteOptions options;
	memset(&options, 0, sizeof options);
	options.params = params;
	options.read_only = false;
	options.dest = dest;
	const int rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq statement failed: %s", SPI_result_code_string(rc))));
	dest->rDestroy(dest);
	return SPI_processed;
}

}  // namespace pgmq::pg
