// include/pgmq/pg/default_partition.hpp
// The rows in the default partition of a partitioned queue or archive: the
// overrun signal of metrics.default_partition_length and of
// partition_status.default_partition_rows. Cheap at any size of spill: a scan
// that stops at the first visible row (is it empty?) and the cumulative
// statistics (how many?), never a count. The default partition is the one
// the catalog records for the parent (pg_partitioned_table.partdefid), never
// a relation found by name. May ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

// false when parent_relid is not a partitioned table (or InvalidOid);
// otherwise true, with *rows the rows of its default partition (0 when it
// has none). The emptiness scan runs only when the caller may SELECT from
// the parent and no row security applies to it: otherwise *rows comes from
// the statistics alone.
bool DefaultPartitionRows(Oid parent_relid, int64 *rows);

}  // namespace pgmq::pg
