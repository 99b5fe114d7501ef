-- features_together_partitioned: a partitioned queue (by msg_id) with each
-- feature that acts on its rows: dead letters into a queue partitioned by
-- time and back (redrive, redrive_all), retry, deduplication, archive
-- retention, pause, priorities, move and unarchive, FIFO groups, topics,
-- insert notifications, and a worker given grant_queue_access. Every row
-- must land in a partition of its own, not in the default one. (The table
-- in docs/architecture.md, "Features together", names these checks.)
\set VERBOSITY terse
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
SET pgmq.queue_head_refresh_interval = 0;
SET pgmq.queue_head_rescan_interval = '1h';

-- Messages of a partitioned table by body, and whether each sits in the
-- default partition.
CREATE FUNCTION pg_temp.placed(parent regclass)
RETURNS TABLE (message jsonb, in_default boolean) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT t.message, c.relname LIKE ''%%\_default'' FROM %s AS t JOIN pg_class AS c ON c.oid = t.tableoid
      ORDER BY t.msg_id', parent);
END $$;

-- (create_partitioned warns that no background worker maintains this
-- database; that is not the point here.)
SET client_min_messages = error;
-- Partitions of 10 ids, made ahead far enough for every id used here.
SELECT pgmq.create_partitioned('fxp_q', '10', '1000', 10);
SELECT pgmq.create_partitioned('fxp_dlq', '1 day', '7 days');
SET client_min_messages = warning;
SELECT pgmq.create('fxp_plain');

-------------------------------------------------------------------------------
-- Dead letters: a read moves messages at their limit from the id-partitioned
-- queue into the time-partitioned dead-letter queue; dead_letter too;
-- redrive and redrive_all bring them back into partitions of the queue.
-------------------------------------------------------------------------------
SELECT pgmq.set_dead_letter_queue('fxp_q', 'fxp_dlq', 1);
SELECT count(*) FROM pgmq.send_batch('fxp_q', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT count(*) AS read FROM pgmq.read('fxp_q', 0, 2);
-- 3 is delivered; 1 and 2, at their limit, move.
SELECT message FROM pgmq.read('fxp_q', 0, 10);
SELECT pgmq.dead_letter('fxp_q', (SELECT msg_id FROM pgmq.q_fxp_q), 'set aside');
SELECT message, headers #>> '{x-pgmq-dead-letter,reason}' AS reason,
       c.relname LIKE 'q\_fxp\_dlq\_p%' AS in_a_day_partition
  FROM pgmq.q_fxp_dlq AS d JOIN pg_class AS c ON c.oid = d.tableoid ORDER BY d.msg_id;
SELECT queue_name, dead_letter_queue, dead_lettered, dead_letter_for FROM pgmq.queue_state('fxp_q');
SELECT pgmq.redrive('fxp_dlq', 'fxp_q', 2);
SELECT * FROM pgmq.redrive_all('fxp_dlq');
SELECT * FROM pg_temp.placed('pgmq.q_fxp_q');
SELECT pgmq.clear_dead_letter_queue('fxp_q');

-------------------------------------------------------------------------------
-- Retry and deduplication: a retried message stays in its partition,
-- hidden for its backoff; a duplicate adds no row to any partition.
-------------------------------------------------------------------------------
SELECT pgmq.set_retry_backoff('fxp_q', 60, 60);
SELECT pgmq.set_deduplication('fxp_q', '1 hour');
SELECT msg_id AS retried FROM pgmq.read('fxp_q', 30, 1) \gset
SELECT message, vt > now() + interval '50 seconds' AS backing_off FROM pgmq.retry('fxp_q', :retried, 'busy');
SELECT pgmq.send('fxp_q', '{"n": "d"}', '{"x-pgmq-deduplication-id": "d"}'::jsonb) AS d \gset
SELECT pgmq.send('fxp_q', '{"n": "d"}', '{"x-pgmq-deduplication-id": "d"}'::jsonb) = :d AS first_id;
SELECT count(*) AS rows FROM pgmq.q_fxp_q;
SELECT pgmq.clear_retry_backoff('fxp_q');
SELECT pgmq.clear_deduplication('fxp_q');

-------------------------------------------------------------------------------
-- Pause and priorities: nothing is read while paused; set_priority builds
-- its index on the partitioned table (so on every partition), and reads
-- take the highest priority first across partitions.
-------------------------------------------------------------------------------
SELECT pgmq.purge_queue('fxp_q');
SELECT pgmq.set_priority('fxp_q', 3);
SELECT bool_and(EXISTS (SELECT FROM pg_index AS i WHERE i.indrelid = h.inhrelid
                         AND pg_get_indexdef(i.indexrelid) LIKE '%x-pgmq-priority%')) AS every_partition_indexed
  FROM pg_inherits AS h WHERE h.inhparent = 'pgmq.q_fxp_q'::regclass;
-- Ids run on into the next partitions.
SELECT count(*) FROM pgmq.send_batch('fxp_q', array_fill('{"n": "filler"}'::jsonb, ARRAY[8]));
SELECT count(*) FROM pgmq.send_batch('fxp_q', ARRAY['{"n": "low"}', '{"n": "high"}', '{"n": "mid"}']::jsonb[],
    ARRAY['{}', '{"x-pgmq-priority": 2}', '{"x-pgmq-priority": 1}']::jsonb[]);
SELECT count(DISTINCT tableoid) > 1 AS spans_partitions FROM pgmq.q_fxp_q;
SELECT pgmq.pause('fxp_q');
SELECT count(*) AS read_while_paused FROM pgmq.read('fxp_q', 30, 10);
SELECT pgmq.resume('fxp_q');
SELECT message->>'n' AS n FROM pgmq.read('fxp_q', 30, 3);
SELECT pgmq.clear_priority('fxp_q');

-------------------------------------------------------------------------------
-- Move and unarchive, archive retention: messages move out to a plain queue
-- and back (new ids in the queue's partitions); an archived message comes
-- back into its own partition; archive retention deletes old archived rows
-- from the archive's partitions (max_age stays pg_partman's: 0A000).
-------------------------------------------------------------------------------
SELECT pgmq.purge_queue('fxp_q');
SELECT count(*) FROM pgmq.send_batch('fxp_q', ARRAY['{"n": "there and back"}', '{"n": "archived"}', '{"n": "expired"}']::jsonb[]);
SELECT count(*) AS moved_out FROM pgmq.move('fxp_q', 'fxp_plain', ARRAY(SELECT msg_id FROM pgmq.q_fxp_q WHERE message->>'n' = 'there and back'));
SELECT count(*) AS moved_back FROM pgmq.move('fxp_plain', 'fxp_q', ARRAY(SELECT msg_id FROM pgmq.q_fxp_plain));
SELECT count(*) FROM pgmq.archive('fxp_q', ARRAY(SELECT msg_id FROM pgmq.q_fxp_q WHERE message->>'n' IN ('archived', 'expired')));
SELECT count(*) AS unarchived FROM pgmq.unarchive('fxp_q', ARRAY(SELECT msg_id FROM pgmq.a_fxp_q WHERE message->>'n' = 'archived'));
SELECT * FROM pg_temp.placed('pgmq.q_fxp_q');
SELECT pgmq.set_retention('fxp_q', '1 hour');
SELECT pgmq.set_retention('fxp_q', NULL, '1 hour');
UPDATE pgmq.a_fxp_q SET archived_at = now() - interval '2 hours';
SELECT pgmq.apply_retention('fxp_q') AS deleted;
SELECT count(*) AS archived FROM pgmq.a_fxp_q;
SELECT pgmq.clear_retention('fxp_q');

-------------------------------------------------------------------------------
-- FIFO groups: the group index on the partitioned table; a group's order
-- holds across partitions.
-------------------------------------------------------------------------------
SELECT pgmq.purge_queue('fxp_q');
SELECT pgmq.create_fifo_index('fxp_q');
SELECT count(*) FROM pgmq.send_batch('fxp_q',
    (SELECT array_agg(jsonb_build_object('n', g || i) ORDER BY i, g) FROM generate_series(1, 4) AS i, unnest(ARRAY['a', 'b']) AS g),
    (SELECT array_agg(jsonb_build_object('x-pgmq-group', g) ORDER BY i, g) FROM generate_series(1, 4) AS i, unnest(ARRAY['a', 'b']) AS g));
SELECT count(DISTINCT tableoid) > 1 AS spans_partitions FROM pgmq.q_fxp_q;
SELECT string_agg(message->>'n', ' ') AS round_robin FROM pgmq.read_grouped_rr('fxp_q', 0, 8);
SELECT string_agg(message->>'n', ' ') AS oldest_group_first FROM pgmq.read_grouped('fxp_q', 30, 8);

-------------------------------------------------------------------------------
-- Topics and insert notifications: a topic send lands in a partition, and
-- notifications on the partitioned table fire for inserts into any
-- partition.
-------------------------------------------------------------------------------
SELECT pgmq.purge_queue('fxp_q');
SELECT pgmq.enable_notify_insert('fxp_q', 3600000);
SELECT pgmq.bind_topic('fxp.#', 'fxp_q');
SELECT pgmq.send_topic('fxp.event', '{"n": "routed"}');
SELECT * FROM pg_temp.placed('pgmq.q_fxp_q');
SELECT last_notified_at > 'epoch' AS notified FROM pgmq.notify_insert_throttle WHERE queue_name = 'fxp_q';
UPDATE pgmq.notify_insert_throttle SET last_notified_at = 'epoch' WHERE queue_name = 'fxp_q';
SELECT count(*) FROM pgmq.send_batch('fxp_plain', ARRAY['{"n": "moved in"}']::jsonb[]);
SELECT count(*) AS moved FROM pgmq.move('fxp_plain', 'fxp_q', ARRAY(SELECT msg_id FROM pgmq.q_fxp_plain));
SELECT last_notified_at > 'epoch' AS notified FROM pgmq.notify_insert_throttle WHERE queue_name = 'fxp_q';
SELECT pgmq.unbind_topic('fxp.#', 'fxp_q');
SELECT pgmq.disable_notify_insert('fxp_q');

-------------------------------------------------------------------------------
-- A worker given grant_queue_access on the partitioned queue: privileges on
-- the parent reach every partition; metrics reads its sequence; queue_state.
-------------------------------------------------------------------------------
CREATE ROLE regress_fxp_worker;
SELECT pgmq.grant_queue_access('fxp_q', 'regress_fxp_worker');
SET ROLE regress_fxp_worker;
SELECT count(*) FROM pgmq.send_batch('fxp_q', array_fill('{"n": "worker"}'::jsonb, ARRAY[4]));
SELECT count(*) AS read FROM pgmq.read('fxp_q', 30, 20);
SELECT count(*) AS archived FROM pgmq.archive('fxp_q', ARRAY(SELECT msg_id FROM pgmq.q_fxp_q));
SELECT queue_length, default_partition_length FROM pgmq.metrics('fxp_q');
SELECT queue_name, paused, visible_length, leased_length FROM pgmq.queue_state('fxp_q');
RESET ROLE;
SELECT count(*) AS in_default FROM pg_temp.placed('pgmq.a_fxp_q') WHERE in_default;

SELECT pgmq.drop_queue(q) FROM unnest(ARRAY['fxp_q', 'fxp_dlq', 'fxp_plain']) AS q;
SELECT count(*) AS part_config_rows FROM partman.part_config WHERE parent_table LIKE 'pgmq._\_fxp%';
DROP OWNED BY regress_fxp_worker;
DROP ROLE regress_fxp_worker;
