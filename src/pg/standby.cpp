// src/pg/standby.cpp
// What a hot standby refuses (see standby.hpp).
#include "pgmq/pg/standby.hpp"

extern "C" {
#include "access/xlog.h"
#include "utils/lsyscache.h"
}

namespace pgmq::pg {

void RefuseDuringRecovery(FunctionCallInfo fcinfo)
{
	if (!RecoveryInProgress())
		return;
	const char *function = fcinfo->flinfo ? get_func_name(fcinfo->flinfo->fn_oid) : nullptr;
	ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
	                errmsg("cannot execute pgmq.%s() during recovery", function ? function : "?"),
	                errhint("This server is a standby: send, read and acknowledge messages on the primary. A standby "
	                        "answers metrics, metrics_all, list_queues, partition_status and list_policies.")));
}

}  // namespace pgmq::pg
