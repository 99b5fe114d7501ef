// include/pgmq/pg/maintenance_worker.hpp
// The pgmq maintenance background worker: every pgmq.maintenance_interval
// seconds, in each database of pgmq.maintenance_database, it runs what
// CALL pgmq.run_partition_maintenance() runs. Registered only when pgmq is
// in shared_preload_libraries. May ereport.
#pragma once

namespace pgmq::pg {

// Defines the pgmq.maintenance_* settings and, while the library is being
// preloaded, registers the launcher. Called from _PG_init.
void InitMaintenance();

// Whether a background worker maintains this database's partitioned queues:
// pgmq's (preloaded, pgmq.maintenance_interval > 0, and the database in
// pgmq.maintenance_database) or pg_partman's (pg_partman_bgw.dbname); or the
// user says something else does (pgmq.partition_maintenance_warning off).
bool PartitionsMaintainedHere();

}  // namespace pgmq::pg
