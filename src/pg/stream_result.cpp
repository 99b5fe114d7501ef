// src/pg/stream_result.cpp
// Plans whose rows stream into the function's result (see stream_result.hpp).
// The receiver is PostgreSQL's own tuplestore receiver, given the function's
// result descriptor as the target: at executor startup it compares the
// statement's columns with it by position (count and type), as PL/pgSQL's
// RETURN QUERY does, and raises 42804 on a mismatch before any row is stored.
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/stream_result.hpp"

extern "C" {
#include "executor/tstoreReceiver.h"
#include "funcapi.h"
#include "nodes/params.h"
#include "tcop/dest.h"
}

namespace pgmq::pg {

namespace {

// Passes rows on to the tuplestore receiver, noting the first row's first
// column (an int8: the tuplestore receiver compared the types at startup).
struct FirstValueReceiver {
	DestReceiver pub;  // first: PostgreSQL sees a DestReceiver
	DestReceiver *inner;
	int64 *first;
	bool seen;
};

bool ReceiveNotingFirst(TupleTableSlot *slot, DestReceiver *self)
{
	auto *receiver = reinterpret_cast<FirstValueReceiver *>(self);
	if (!receiver->seen) {
		bool isnull;
		const Datum value = slot_getattr(slot, 1, &isnull);
		if (!isnull) {
			*receiver->first = DatumGetInt64(value);
			receiver->seen = true;
		}
	}
	return receiver->inner->receiveSlot(slot, receiver->inner);
}

void StartupInner(DestReceiver *self, int operation, TupleDesc desc)
{
	DestReceiver *inner = reinterpret_cast<FirstValueReceiver *>(self)->inner;
	inner->rStartup(inner, operation, desc);
}

void ShutdownInner(DestReceiver *self)
{
	DestReceiver *inner = reinterpret_cast<FirstValueReceiver *>(self)->inner;
	inner->rShutdown(inner);
}

void DestroyBoth(DestReceiver *self)
{
	DestReceiver *inner = reinterpret_cast<FirstValueReceiver *>(self)->inner;
	inner->rDestroy(inner);
	pfree(self);
}

}  // namespace

uint64 ExecutePlanIntoResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values, const char *nulls,
                             int64 *first_value)
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
	if (first_value) {
		auto *noting = static_cast<FirstValueReceiver *>(palloc0(sizeof(FirstValueReceiver)));
		noting->pub = *dest;
		noting->pub.receiveSlot = ReceiveNotingFirst;
		noting->pub.rStartup = StartupInner;
		noting->pub.rShutdown = ShutdownInner;
		noting->pub.rDestroy = DestroyBoth;
		noting->inner = dest;
		noting->first = first_value;
		dest = &noting->pub;
	}
	SPIExecuteOptions options;
	memset(&options, 0, sizeof options);
	options.params = params;
	options.read_only = false;
	options.dest = dest;
	int rc = 0;
	EditingErrors([&] { rc = SPI_execute_plan_extended(plan, &options); },
	              [plan](ErrorData *error) { ShortenPlanContext(error, plan); });
	if (rc < 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq statement failed: %s", SPI_result_code_string(rc))));
	dest->rDestroy(dest);
	return SPI_processed;
}

}  // namespace pgmq::pg
