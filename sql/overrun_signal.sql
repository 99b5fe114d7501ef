-- overrun_signal: the default-partition figures and runway_seconds of
-- metrics / partition_status (issue 17). The default partition is the one
-- the catalog records for the table, never a relation found by name; it is
-- scanned only for a caller who could read the queue table without row
-- security; runway_seconds needs a message to measure the send rate from.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

-- 10 ids per partition, 2 premade: ids 1..29 have partitions.
SELECT pgmq.create_partitioned('os_q', '10', '1000', 2);
-- A fresh queue: nothing to measure a rate from, so runway_seconds is NULL.
SELECT parent_table, runway_messages, runway_seconds, default_partition_rows
  FROM pgmq.partition_status('os_q');
SELECT count(*) FROM pgmq.send_batch('os_q', array_fill('{}'::jsonb, ARRAY[20]));
-- 20 ids sent, 9 left: runway_seconds is now measured (from id 10, 10 ids back).
SELECT parent_table, runway_messages, runway_seconds > 0 AS measured
  FROM pgmq.partition_status('os_q');

-- A role that may read the sequence and partman's configuration, not the table.
CREATE ROLE regress_os_mon;
GRANT USAGE ON SCHEMA pgmq, partman TO regress_os_mon;
GRANT SELECT ON pgmq.q_os_q_msg_id_seq, partman.part_config TO regress_os_mon;
SET ROLE regress_os_mon;
-- No error, and no rate: partition_status never read the queue table before.
SELECT parent_table, runway_messages, runway_seconds, default_partition_rows
  FROM pgmq.partition_status('os_q');
RESET ROLE;
-- Row security on the queue table: the rate is not sampled either (a
-- tenant's policy must not run as the monitoring role).
GRANT SELECT ON pgmq.q_os_q TO regress_os_mon;
ALTER TABLE pgmq.q_os_q ENABLE ROW LEVEL SECURITY;
SET ROLE regress_os_mon;
SELECT parent_table, runway_seconds FROM pgmq.partition_status('os_q');
RESET ROLE;
ALTER TABLE pgmq.q_os_q DISABLE ROW LEVEL SECURITY;
SET ROLE regress_os_mon;
SELECT parent_table, runway_seconds > 0 AS measured FROM pgmq.partition_status('os_q');
RESET ROLE;

-- Overrun: ids 30..40 land in the default partition. Non-zero at once.
SELECT count(*) FROM pgmq.send_batch('os_q', array_fill('{}'::jsonb, ARRAY[20]));
SELECT default_partition_length > 0 AS spilled FROM pgmq.metrics('os_q');
SELECT parent_table, runway_messages, runway_seconds, default_partition_rows > 0 AS spilled
  FROM pgmq.partition_status('os_q');
SELECT pg_stat_force_next_flush();
SELECT default_partition_length FROM pgmq.metrics('os_q');

-- Not the table named q_os_q_default: the default partition the catalog
-- records. Detached and replaced by a table of that name full of rows, it no
-- longer counts (the old figure read the decoy's reltuples after ANALYZE).
ALTER TABLE pgmq.q_os_q DETACH PARTITION pgmq.q_os_q_default;
ALTER TABLE pgmq.q_os_q_default RENAME TO q_os_q_detached;
CREATE TABLE pgmq.q_os_q_default (n int);
INSERT INTO pgmq.q_os_q_default SELECT generate_series(1, 1000);
ANALYZE pgmq.q_os_q_default;
SELECT default_partition_length FROM pgmq.metrics('os_q');
SELECT parent_table, default_partition_rows FROM pgmq.partition_status('os_q');
DROP TABLE pgmq.q_os_q_default;
ALTER TABLE pgmq.q_os_q_detached RENAME TO q_os_q_default;
ALTER TABLE pgmq.q_os_q ATTACH PARTITION pgmq.q_os_q_default DEFAULT;
SELECT default_partition_length FROM pgmq.metrics('os_q');

-- Recovery empties the default partition: 0 at once.
CALL pgmq.recover_partitioned_queue('os_q');
SELECT default_partition_length FROM pgmq.metrics('os_q');
SELECT parent_table, default_partition_rows FROM pgmq.partition_status('os_q');

-- Consumers that delete the spilled messages empty it too, without ANALYZE
-- (the statistics still count rows until they are published; the scan does not).
SELECT pgmq.create_partitioned('os_del', '10', '1000', 1);
SELECT count(*) FROM pgmq.send_batch('os_del', array_fill('{}'::jsonb, ARRAY[25]));
SELECT pg_stat_force_next_flush();
SELECT default_partition_length FROM pgmq.metrics('os_del');
SELECT count(*) FROM pgmq.delete('os_del', ARRAY(SELECT generate_series(20, 25))::bigint[]);
SELECT default_partition_length FROM pgmq.metrics('os_del');

-- Plain queues: NULL, as before.
SELECT pgmq.create('os_plain');
SELECT default_partition_length FROM pgmq.metrics('os_plain');

SELECT pgmq.drop_queue('os_q');
SELECT pgmq.drop_queue('os_del');
SELECT pgmq.drop_queue('os_plain');
REVOKE ALL ON SCHEMA pgmq, partman FROM regress_os_mon;
REVOKE ALL ON partman.part_config FROM regress_os_mon;
DROP ROLE regress_os_mon;
