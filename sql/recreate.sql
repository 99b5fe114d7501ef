-- recreate: a queue dropped and created again under the same name in the
-- same session. Every statement kind is used before the drop so that the
-- backend has cached plans for the old tables (STYLE.md §2 tests): after the
-- drop they must report the missing queue, after the re-create they must
-- work on the new tables. SQLSTATEs are printed with :LAST_ERROR_SQLSTATE.
\pset null '<NULL>'
SELECT pgmq.create('rc_q');
SELECT pgmq.send('rc_q', '{"gen": 1, "n": 1}') AS first_id \gset
SELECT pgmq.send('rc_q', '{"gen": 1, "n": 2}', '{"h": 1}'::jsonb) - :first_id AS rel_id;
SELECT count(*) FROM pgmq.send_batch('rc_q', ARRAY['{"gen": 1, "n": 3}', '{"gen": 1, "n": 4}', '{"gen": 1, "n": 5}']::jsonb[]);
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.read('rc_q', 30, 1);
SELECT msg_id - :first_id AS rel_id FROM pgmq.read('rc_q', 0, 1, '{"n": 2}');
SELECT msg_id - :first_id AS rel_id FROM pgmq.read_with_poll('rc_q', 30, 1, 1, 10);
SELECT msg_id - :first_id AS rel_id FROM pgmq.set_vt('rc_q', :first_id, 0);
SELECT msg_id - :first_id AS rel_id FROM pgmq.set_vt('rc_q', ARRAY[:first_id]::bigint[], 0);
SELECT msg_id - :first_id AS rel_id FROM pgmq.pop('rc_q');
SELECT pgmq.delete('rc_q', :first_id + 2);
SELECT count(*) FROM pgmq.delete('rc_q', ARRAY[:first_id + 3]::bigint[]);
SELECT pgmq.archive('rc_q', :first_id + 4);
SELECT count(*) FROM pgmq.archive('rc_q', ARRAY[:first_id + 1]::bigint[]);
SELECT queue_length, total_messages FROM pgmq.metrics('rc_q');

SELECT pgmq.drop_queue('rc_q');

-- Every function on the dropped queue: the pgmq error, SQLSTATE 42P01
-- (undefined_table), never a crash or a stale plan.
SELECT * FROM pgmq.read('rc_q', 30, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.read('rc_q', 30, 1, '{"n": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.read_with_poll('rc_q', 30, 1, 1, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.send('rc_q', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.send_batch('rc_q', ARRAY['{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.pop('rc_q');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.set_vt('rc_q', 1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.set_vt('rc_q', ARRAY[1]::bigint[], 0);
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.delete('rc_q', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.delete('rc_q', ARRAY[1]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.archive('rc_q', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.archive('rc_q', ARRAY[1]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pgmq.metrics('rc_q');
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.purge_queue('rc_q');
\echo :LAST_ERROR_SQLSTATE
SELECT pgmq.drop_queue('rc_q');
-- Other spellings of the name are the same missing queue.
SELECT * FROM pgmq.read('RC_Q', 30, 1);
\echo :LAST_ERROR_SQLSTATE

-- Created again: everything works on the new tables and msg_id restarts.
SELECT pgmq.create('rc_q');
SELECT pgmq.send('rc_q', '{"gen": 2, "n": 1}');
SELECT pgmq.send('rc_q', '{"gen": 2, "n": 2}', '{"h": 2}'::jsonb);
SELECT pgmq.send_batch('rc_q', ARRAY['{"gen": 2, "n": 3}', '{"gen": 2, "n": 4}', '{"gen": 2, "n": 5}']::jsonb[]);
SELECT msg_id, read_ct, message, headers FROM pgmq.read('rc_q', 30, 1);
SELECT msg_id, message FROM pgmq.read('rc_q', 0, 1, '{"n": 2}');
SELECT msg_id FROM pgmq.read_with_poll('rc_q', 30, 1, 1, 10);
SELECT msg_id, read_ct FROM pgmq.set_vt('rc_q', 1, 0);
SELECT msg_id, read_ct FROM pgmq.set_vt('rc_q', ARRAY[1]::bigint[], 0);
SELECT msg_id, message FROM pgmq.pop('rc_q');
SELECT pgmq.delete('rc_q', 3);
SELECT pgmq.delete('rc_q', ARRAY[4]::bigint[]);
SELECT pgmq.archive('rc_q', 5);
SELECT pgmq.archive('rc_q', ARRAY[2]::bigint[]);
SELECT msg_id, message, headers FROM pgmq.a_rc_q ORDER BY msg_id;
SELECT queue_name, queue_length, total_messages FROM pgmq.metrics('rc_q');
SELECT count(*) FROM pgmq.meta WHERE queue_name = 'rc_q';

-- Dropped and created again inside one transaction, as a different kind.
BEGIN;
SELECT pgmq.drop_queue('rc_q');
SELECT pgmq.create_unlogged('rc_q');
SELECT pgmq.send('rc_q', '{"gen": 3}');
SELECT msg_id, message FROM pgmq.read('rc_q', 30, 1);
COMMIT;
SELECT relpersistence FROM pg_class WHERE oid = 'pgmq.q_rc_q'::regclass;
SELECT queue_name, is_unlogged FROM pgmq.meta WHERE queue_name = 'rc_q';
SELECT queue_length, total_messages FROM pgmq.metrics('rc_q');

-- A drop rolled back leaves the queue usable.
BEGIN;
SELECT pgmq.drop_queue('rc_q');
ROLLBACK;
SELECT pgmq.send('rc_q', '{"gen": 3, "after": "rollback"}');
SELECT msg_id, message FROM pgmq.pop('rc_q');

-- Re-created with the physical column order of an upgraded upstream install
-- (headers appended in 1.5.0, last_read_at appended in 1.10.0): functions
-- name their columns, so results keep message_record's order.
SELECT pgmq.drop_queue('rc_q');
CREATE TABLE pgmq.q_rc_q (
    msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message JSONB,
    headers JSONB,
    last_read_at TIMESTAMP WITH TIME ZONE
);
CREATE TABLE pgmq.a_rc_q (
    msg_id BIGINT PRIMARY KEY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message JSONB,
    headers JSONB,
    last_read_at TIMESTAMP WITH TIME ZONE
);
INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES ('rc_q', false, false);
SELECT pgmq.send('rc_q', '{"gen": 4, "n": 1}', '{"h": 4}'::jsonb);
SELECT pgmq.send_batch('rc_q', ARRAY['{"gen": 4, "n": 2}', '{"gen": 4, "n": 3}']::jsonb[]);
SELECT msg_id, read_ct, enqueued_at <= now() AS enqueued_ok, last_read_at IS NOT NULL AS has_last_read_at,
       vt > now() AS invisible, message, headers
  FROM pgmq.read('rc_q', 30, 1);
SELECT msg_id, read_ct, last_read_at IS NOT NULL AS has_last_read_at, message, headers
  FROM pgmq.set_vt('rc_q', 1, 0);
SELECT msg_id, read_ct, last_read_at IS NOT NULL AS has_last_read_at, message, headers
  FROM pgmq.pop('rc_q');
SELECT pgmq.archive('rc_q', 2);
SELECT msg_id, read_ct, last_read_at, message, headers, archived_at IS NOT NULL AS has_archived_at
  FROM pgmq.a_rc_q;
SELECT queue_length, total_messages FROM pgmq.metrics('rc_q');

SELECT pgmq.drop_queue('rc_q');
SELECT to_regclass('pgmq.q_rc_q') IS NULL AS q_gone, to_regclass('pgmq.a_rc_q') IS NULL AS a_gone;
