// include/pgmq/pg/standby.hpp
// What a hot standby refuses. Adapter internals; may ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

// ERROR 25006 "cannot execute pgmq.<function>() during recovery" on a hot
// standby, for the functions that change messages (send, read, pop,
// delete, archive, set_vt, the group reads). Called before anything else,
// so that every queue gets this error: an unlogged queue, of which a
// standby has no copy, would otherwise fail with 0A000 when its table is
// opened.
void RefuseDuringRecovery(FunctionCallInfo fcinfo);

}  // namespace pgmq::pg
