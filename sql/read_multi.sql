-- read_multi: one read over several queues, in turn. Each pass gives every
-- queue that still has messages an equal share of what is left, so a busy
-- queue cannot starve the others; the first queue rotates from call to
-- call; a queue listed twice (in any spelling) is read once; the queues'
-- pauses and privileges apply; bad arguments get clear errors.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT pgmq.create('rm_busy');
SELECT pgmq.create('rm_small');
SELECT pgmq.create('rm_empty');
SELECT count(*) FROM pgmq.send_batch('rm_busy', array_fill('{"from": "busy"}'::jsonb, ARRAY[50]));
SELECT count(*) FROM pgmq.send_batch('rm_small', array_fill('{"from": "small"}'::jsonb, ARRAY[3]));

-- 10 rows from three queues: small gives its 3, busy the rest.
SELECT queue_name, count(*), min(read_ct), max(read_ct)
FROM pgmq.read_multi(ARRAY['rm_busy', 'rm_small', 'rm_empty', 'RM_BUSY'], 30, 10) GROUP BY 1 ORDER BY 1;
-- The result's columns.
SELECT * FROM pgmq.read_multi(ARRAY['rm_busy'], 30, 0);

-- Two busy queues share evenly; with one row per call they take turns.
SELECT count(*) FROM pgmq.send_batch('rm_small', array_fill('{"from": "small"}'::jsonb, ARRAY[50]));
SELECT queue_name, count(*) FROM pgmq.read_multi(ARRAY['rm_busy', 'rm_small'], 30, 10) GROUP BY 1 ORDER BY 1;
CREATE TEMP TABLE turns (queue_name text);
DO $$ BEGIN
    FOR i IN 1..6 LOOP
        INSERT INTO turns SELECT queue_name FROM pgmq.read_multi(ARRAY['rm_busy', 'rm_small'], 30, 1);
    END LOOP;
END $$;
SELECT queue_name, count(*) FROM turns GROUP BY 1 ORDER BY 1;

-- A paused queue gives nothing; the others still do.
SELECT pgmq.pause('rm_busy');
SELECT queue_name, count(*) FROM pgmq.read_multi(ARRAY['rm_busy', 'rm_small'], 30, 4) GROUP BY 1 ORDER BY 1;
SELECT pgmq.resume('rm_busy');

-- Polling returns at once when a queue has messages, else after its wait.
SELECT queue_name, count(*) FROM pgmq.read_multi_with_poll(ARRAY['rm_empty', 'rm_busy'], 30, 2, 5, 100) GROUP BY 1;
SELECT count(*) FROM pgmq.read_multi_with_poll(ARRAY['rm_empty'], 30, 2, 1, 100);

-- Every queue needs the reader's privileges: one it may not read fails the call.
CREATE ROLE regress_rm_reader;
GRANT USAGE ON SCHEMA pgmq TO regress_rm_reader;
GRANT SELECT, UPDATE ON pgmq.q_rm_small TO regress_rm_reader;
SET ROLE regress_rm_reader;
SELECT queue_name, count(*) FROM pgmq.read_multi(ARRAY['rm_small'], 30, 1) GROUP BY 1;
SELECT count(*) FROM pgmq.read_multi(ARRAY['rm_small', 'rm_busy'], 30, 10);
RESET ROLE;

-- vt 0 leaves claimed messages visible: each queue is read once per call,
-- so no message comes twice (rm_busy has more, but gives its share only).
SELECT count(*) FROM pgmq.send_batch('rm_empty', array_fill('{"from": "empty"}'::jsonb, ARRAY[2]));
SELECT queue_name, count(*) AS rows, count(DISTINCT msg_id) AS messages
FROM pgmq.read_multi(ARRAY['rm_empty', 'rm_busy'], 0, 10) GROUP BY 1 ORDER BY 1;

-- Bad arguments.
SELECT * FROM pgmq.read_multi(NULL, 30, 1);
SELECT * FROM pgmq.read_multi(ARRAY['rm_busy', NULL], 30, 1);
SELECT * FROM pgmq.read_multi(ARRAY['rm_busy', 'rm_missing'], 30, 1);
SELECT * FROM pgmq.read_multi(ARRAY[['rm_busy']], 30, 1);
SELECT * FROM pgmq.read_multi(ARRAY['rm_busy'], NULL, 1);
SELECT * FROM pgmq.read_multi(ARRAY['rm_busy'], 30, -1);
SELECT * FROM pgmq.read_multi(ARRAY['bad;name'], 30, 1);
SELECT count(*) FROM pgmq.read_multi('{}', 30, 1);
SELECT count(*) FROM pgmq.read_multi_with_poll('{}', 30, 1, 5, 100);

SELECT pgmq.drop_queue('rm_busy');
SELECT pgmq.drop_queue('rm_small');
SELECT pgmq.drop_queue('rm_empty');
REVOKE ALL ON SCHEMA pgmq FROM regress_rm_reader;
DROP ROLE regress_rm_reader;
