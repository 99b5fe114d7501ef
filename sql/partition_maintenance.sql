-- partition_maintenance: pgmq's own partition maintenance and recovery, and
-- convert_archive_partitioned (API.md §2.10).
--  - run_partition_maintenance: table by table, one overrun queue is a
--    WARNING and the others are maintained (here inside a transaction
--    block, where subtransactions isolate the tables); id partitions are
--    premade from the queue's sequence, so a drained queue keeps its runway,
--    and empty partitions beyond retention are dropped;
--  - recover_partitioned_queue: the overrun queue and its archive back in
--    order, every message kept with its id; refused in a transaction block;
--  - convert_archive_partitioned: the archived rows are kept (upstream
--    leaves them behind), by msg_id and by time; upstream's notices.
-- Time partitions are named after dates: shown as offsets in days.
-- pg_partman 5.5 skips an overrun table with a WARNING of its own where 4.x
-- and 5.2 fail, so pgmq's maintenance reports it differently there:
-- expected/partition_maintenance_1.out is that output (bash test/run --pg 18).
\pset null '<NULL>'
SET timezone = 'UTC';
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
-- pg_partman 4.x names a daily partition <parent>_pYYYY_MM_DD, 5.x <parent>_pYYYYMMDD.
CREATE FUNCTION pg_temp.named_for_day(relname name, parent text, day timestamptz)
RETURNS boolean LANGUAGE sql AS $$
  SELECT relname::text IN (parent || '_p' || to_char(day, 'YYYY_MM_DD'), parent || '_p' || to_char(day, 'YYYYMMDD'))
$$;

-- Partitions of a parent, by first id (the default partition last).
CREATE FUNCTION pg_temp.children(parent regclass) RETURNS TABLE(child name) LANGUAGE sql AS $$
  SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = parent
   ORDER BY pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT',
            (substring(pg_get_expr(c.relpartbound, c.oid) FROM $r$\('(-?\d+)'\)$r$))::bigint NULLS LAST, 1
$$;
-- The first line of an error, and nothing of partman's embedded context
-- (which names its own line numbers).
CREATE FUNCTION pg_temp.try(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN 'ERROR: ' || split_part(SQLERRM, E'\n', 1);
END $$;
-- Rows per partition of a parent.
CREATE FUNCTION pg_temp.spread(parent regclass)
RETURNS TABLE(child name, messages bigint, ids text) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT c.relname, count(t.msg_id), min(t.msg_id) || ''-'' || max(t.msg_id)
       FROM %s t JOIN pg_class c ON c.oid = t.tableoid GROUP BY c.relname ORDER BY min(t.msg_id)', parent);
END $$;

--------------------------------------------------------------------------------
-- run_partition_maintenance with one queue overrun.
--------------------------------------------------------------------------------
SELECT pgmq.create_partitioned('pm_over', '10', '1000', 1);
SELECT pgmq.create_partitioned('pm_ok', '10', '1000', 1);
-- pm_over: ids 1-19 fit, 20-25 spill. pm_ok: 15 of its 19 ids used.
SELECT count(*) FROM pgmq.send_batch('pm_over', array_fill('{}'::jsonb, ARRAY[25]));
SELECT count(*) FROM pgmq.send_batch('pm_ok', array_fill('{}'::jsonb, ARRAY[15]));
SELECT * FROM pg_temp.spread('pgmq.q_pm_over');
SELECT parent_table, premade_until, runway_messages FROM pgmq.partition_status('pm_ok');
-- pg_partman's own run for the database fails for every table (4.x, 5.2);
-- 5.5 skips pm_over with the same error as a WARNING and maintains the rest.
SET client_min_messages = error;
SELECT pg_temp.try('SELECT partman.run_maintenance()') IN ('ok',
       'ERROR: updated partition constraint for default partition "q_pm_over_default" would be violated by some row')
       AS refused;
RESET client_min_messages;
-- pgmq's: a WARNING for pm_over (with a hint to recover), pm_ok maintained.
-- Inside a transaction block it cannot commit between tables; a
-- subtransaction per table still isolates the failure.
BEGIN;
CALL pgmq.run_partition_maintenance();
COMMIT;
SELECT parent_table, premade_until, runway_messages FROM pgmq.partition_status('pm_ok');
-- pm_over got partitions above its spill (p30, not p20: rows 20-25 are in
-- the default partition): new messages from id 30 on go to real partitions.
SELECT * FROM pg_temp.children('pgmq.q_pm_over');
SELECT count(*) FROM pgmq.send_batch('pm_over', array_fill('{}'::jsonb, ARRAY[6]));
SELECT * FROM pg_temp.spread('pgmq.q_pm_over');
-- Now pg_partman's own maintenance of pm_over succeeds; pgmq's warns about
-- the messages still in the default partition.
SELECT partman.run_maintenance('pgmq.q_pm_over');
CALL pgmq.run_partition_maintenance('pm_over');

--------------------------------------------------------------------------------
-- recover_partitioned_queue.
--------------------------------------------------------------------------------
SELECT count(*) FROM pgmq.archive('pm_over', ARRAY[21, 22]::bigint[]);
SELECT * FROM pg_temp.spread('pgmq.a_pm_over');
CREATE TEMP TABLE before_q AS SELECT * FROM pgmq.q_pm_over;
CREATE TEMP TABLE before_a AS SELECT * FROM pgmq.a_pm_over;
-- Refused in a transaction block (it commits as it goes).
BEGIN;
CALL pgmq.recover_partitioned_queue('pm_over');
ROLLBACK;
CALL pgmq.recover_partitioned_queue('pm_over');
SELECT * FROM pg_temp.spread('pgmq.q_pm_over');
SELECT * FROM pg_temp.spread('pgmq.a_pm_over');
SELECT default_partition_length FROM pgmq.metrics('pm_over');
-- Every message kept, with all its columns.
SELECT (SELECT count(*) FROM before_q) = (SELECT count(*) FROM pgmq.q_pm_over) AS same_count,
       NOT EXISTS (SELECT * FROM before_q EXCEPT SELECT * FROM pgmq.q_pm_over) AS same_rows,
       NOT EXISTS (SELECT * FROM before_a EXCEPT SELECT * FROM pgmq.a_pm_over) AS same_archive;
SELECT partman.run_maintenance();
-- The next send continues the sequence; a second recovery moves nothing.
SELECT pgmq.send('pm_over', '{}');
CALL pgmq.recover_partitioned_queue('pm_over');
-- Names are matched as tables are: any spelling of the queue's name.
CALL pgmq.recover_partitioned_queue('PM_OVER');

--------------------------------------------------------------------------------
-- A queue that its consumers keep empty: premade from the sequence, and
-- retention (30 ids) counted from the sequence drops its empty partitions.
--------------------------------------------------------------------------------
SELECT pgmq.create_partitioned('pm_drain', '10', '30', 1);
SELECT count(*) FROM pgmq.send_batch('pm_drain', array_fill('{}'::jsonb, ARRAY[45]));
SELECT count(*) FROM pgmq.delete('pm_drain', ARRAY(SELECT msg_id FROM pgmq.q_pm_drain));
SELECT count(*) FROM pgmq.q_pm_drain_default;
TRUNCATE pgmq.q_pm_drain_default;
-- pg_partman finds no id in an empty queue: it premakes and drops nothing.
SELECT partman.run_maintenance('pgmq.q_pm_drain');
SELECT * FROM pg_temp.children('pgmq.q_pm_drain');
-- pgmq's: p40 (that of the newest id, 45) and one more are made; p0 is gone
-- (it ends at 10, at or below 45 - 30), in the archive too.
CALL pgmq.run_partition_maintenance('pm_drain');
SELECT * FROM pg_temp.children('pgmq.q_pm_drain');
SELECT * FROM pg_temp.children('pgmq.a_pm_drain');
SELECT parent_table, current_position, premade_until, runway_messages FROM pgmq.partition_status('pm_drain');
-- A partition with a message in it is never dropped by this retention.
SELECT pgmq.send('pm_drain', '{}') AS kept_id \gset
UPDATE pgmq.q_pm_drain SET msg_id = 15 WHERE msg_id = :kept_id;
SELECT count(*) FROM pgmq.send_batch('pm_drain', array_fill('{}'::jsonb, ARRAY[9]));
SELECT count(*) FROM pgmq.delete('pm_drain', ARRAY(SELECT msg_id FROM pgmq.q_pm_drain WHERE msg_id > 15));
-- Newest id 55: p10 (ending at 20 <= 55 - 30) holds message 15 and stays.
CALL pgmq.run_partition_maintenance('pm_drain');
SELECT * FROM pg_temp.children('pgmq.q_pm_drain');

--------------------------------------------------------------------------------
-- Errors.
--------------------------------------------------------------------------------
SELECT pgmq.create('pm_plain');
CALL pgmq.run_partition_maintenance('pm_plain');
CALL pgmq.recover_partitioned_queue('pm_plain');
CALL pgmq.run_partition_maintenance('pm_nosuch');
CALL pgmq.recover_partitioned_queue('pm_nosuch');
CALL pgmq.recover_partitioned_queue(NULL);
-- Without pg_partman (dropped in a transaction that is rolled back).
BEGIN;
DROP EXTENSION pg_partman;
CALL pgmq.run_partition_maintenance();
ROLLBACK;

--------------------------------------------------------------------------------
-- convert_archive_partitioned: by msg_id, the archived rows kept.
--------------------------------------------------------------------------------
SELECT count(*) FROM pgmq.send_batch('pm_plain', ARRAY(SELECT jsonb_build_object('n', i) FROM generate_series(1, 35) i));
SELECT count(*) FROM pgmq.archive('pm_plain', ARRAY(SELECT generate_series(1, 30))::bigint[]);
CREATE TEMP TABLE before_plain AS SELECT * FROM pgmq.a_pm_plain;
SELECT pgmq.convert_archive_partitioned('pm_plain', '10', '1000');
SELECT relkind FROM pg_class WHERE oid = 'pgmq.a_pm_plain'::regclass;
SELECT * FROM pg_temp.spread('pgmq.a_pm_plain');
SELECT NOT EXISTS (SELECT * FROM before_plain EXCEPT SELECT * FROM pgmq.a_pm_plain)
   AND (SELECT count(*) FROM pgmq.a_pm_plain) = 30 AS all_rows_kept;
SELECT to_regclass('pgmq.a_pm_plain_old') AS old_table;
SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index
 WHERE indrelid = 'pgmq.a_pm_plain'::regclass ORDER BY 1;
SELECT parent_table, control, partition_interval, premake, retention, retention_keep_table,
       infinite_time_partitions, automatic_maintenance
  FROM partman.part_config WHERE parent_table = 'pgmq.a_pm_plain';
-- The queue keeps working: archive into the partitioned archive, metrics.
SELECT pgmq.archive('pm_plain', 31::bigint);
SELECT count(*) FROM pgmq.a_pm_plain;
SELECT queue_name, is_partitioned FROM pgmq.meta WHERE queue_name = 'pm_plain';
-- Upstream's notices, with its stray "s": already partitioned, no archive.
SELECT pgmq.convert_archive_partitioned('pm_plain');
SELECT pgmq.convert_archive_partitioned('pm_nosuch');
-- Errors, each leaving the archive as it was.
SELECT pgmq.create('pm_plain2');
SELECT pgmq.convert_archive_partitioned('pm_plain2', '10', '1 day');
SELECT pgmq.convert_archive_partitioned('pm_plain2', '1 dya', '7 days');
SELECT pgmq.convert_archive_partitioned('pm_plain2', NULL, '100');
SELECT pgmq.create('pm.dot');
SELECT pgmq.convert_archive_partitioned('pm.dot');
BEGIN;
DROP EXTENSION pg_partman;
SAVEPOINT s;
SELECT pgmq.convert_archive_partitioned('pm_plain2');
ROLLBACK;
SELECT c.relname, c.relkind FROM pg_class c
 WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relname IN ('a_pm_plain2', 'a_pm.dot', 'a_pm_plain2_old') ORDER BY 1;

--------------------------------------------------------------------------------
-- convert_archive_partitioned by time: partitioned by archived_at.
--------------------------------------------------------------------------------
SELECT count(*) FROM pgmq.send_batch('pm_plain2', array_fill('{}'::jsonb, ARRAY[8]));
SELECT count(*) FROM pgmq.archive('pm_plain2', ARRAY[1, 2, 3, 4, 5, 6, 7, 8]::bigint[]);
-- Archived on each of the last seven days (two 3 days ago), in pg_regress's
-- DateStyle: pg_partman 5.x compares the times as text, which orders days
-- only in ISO style ('Sun Nov 29' > 'Mon Nov 30'); a week has such a pair.
SHOW datestyle;
UPDATE pgmq.a_pm_plain2 a SET archived_at = a.archived_at - d.days * interval '1 day'
  FROM (VALUES (2, 1), (3, 3), (4, 3), (5, 2), (6, 4), (7, 5), (8, 6)) d(msg_id, days) WHERE a.msg_id = d.msg_id;
SELECT pgmq.convert_archive_partitioned('pm_plain2', '1 day', '30 days');
SELECT a.msg_id,
       round(extract(epoch FROM date_trunc('day', a.archived_at) - date_trunc('day', now())) / 86400) AS day,
       pg_temp.named_for_day(c.relname, 'a_pm_plain2', a.archived_at) AS in_its_day
  FROM pgmq.a_pm_plain2 a JOIN pg_class c ON c.oid = a.tableoid ORDER BY a.msg_id;
SELECT parent_table, control, partition_interval, retention FROM partman.part_config
 WHERE parent_table = 'pgmq.a_pm_plain2';
SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index
 WHERE indrelid = 'pgmq.a_pm_plain2'::regclass ORDER BY 1;

--------------------------------------------------------------------------------
-- drop_queue removes the converted archive's pg_partman configuration.
--------------------------------------------------------------------------------
SELECT pgmq.drop_queue('pm_over'), pgmq.drop_queue('pm_ok'), pgmq.drop_queue('pm_drain'),
       pgmq.drop_queue('pm_plain'), pgmq.drop_queue('pm_plain2'), pgmq.drop_queue('pm.dot');
SELECT count(*) AS part_config_rows FROM partman.part_config WHERE parent_table LIKE 'pgmq._\_pm%';
SELECT count(*) AS tables_left FROM pg_class WHERE relnamespace = 'pgmq'::regnamespace AND relname ~ '^[qa]_pm';
