-- policy_dead_letter: a message delivered max_deliveries times is moved to
-- the dead-letter queue by the next read that would deliver it, in the same
-- statement (never both delivered and moved), with x-pgmq-dead-letter; every
-- read path honours it (read, read with a condition, read_with_poll, the
-- grouped reads, where a dead-lettered head stops blocking its group);
-- redrive moves messages back, oldest first; dropping the dead-letter queue
-- turns the policy off; list_policies counts the dead-lettered messages.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT pgmq.create('dl_jobs');
SELECT pgmq.create('dl_dead');

-- Arguments.
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_dead', 0);
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_jobs', 2);
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_missing', 2);
SELECT pgmq.set_dead_letter_queue('dl_missing', 'dl_dead', 2);
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_dead', NULL);

SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_dead', 2);
SELECT queue_name, dead_letter_queue, max_deliveries, dead_lettered FROM pgmq.list_policies();

SELECT s AS first_id FROM pgmq.send('dl_jobs', '{"n": 1}', '{"trace": "t1"}'::jsonb) AS s \gset
SELECT s - :first_id AS id FROM pgmq.send('dl_jobs', '{"n": 2}') AS s;

-- Two deliveries each: read_ct reaches 2.
SELECT msg_id - :first_id AS id, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT msg_id - :first_id AS id, read_ct FROM pgmq.read('dl_jobs', 0, 10);
-- The third read delivers nothing: both move, in that statement.
SELECT msg_id - :first_id AS id, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT count(*) AS left_in_queue FROM pgmq.q_dl_jobs;
SELECT message, headers - 'x-pgmq-dead-letter' AS headers,
       headers -> 'x-pgmq-dead-letter' ->> 'queue' AS source,
       (headers -> 'x-pgmq-dead-letter' ->> 'msg_id')::bigint - :first_id AS source_id,
       headers -> 'x-pgmq-dead-letter' -> 'read_ct' AS read_ct,
       (headers -> 'x-pgmq-dead-letter' ->> 'enqueued_at')::timestamptz <= now() AS has_enqueued_at,
       (headers -> 'x-pgmq-dead-letter' ->> 'moved_at')::timestamptz <= clock_timestamp() AS has_moved_at,
       read_ct AS dlq_read_ct, vt <= clock_timestamp() AS visible
FROM pgmq.q_dl_dead ORDER BY msg_id;
SELECT queue_name, dead_lettered FROM pgmq.list_policies();

-- A read that rolls back moves nothing: the move is part of the read.
SELECT s - :first_id AS id FROM pgmq.send('dl_jobs', '{"n": 3}') AS s;
UPDATE pgmq.q_dl_jobs SET read_ct = 2;
BEGIN;
SELECT msg_id FROM pgmq.read('dl_jobs', 0, 10);
SELECT count(*) AS in_dlq_inside FROM pgmq.q_dl_dead;
ROLLBACK;
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_dl_dead) AS in_dlq FROM pgmq.q_dl_jobs;

-- Under the limit, the same read delivers; a mixed batch does both.
SELECT s - :first_id AS id FROM pgmq.send('dl_jobs', '{"n": 4}') AS s;
SELECT msg_id - :first_id AS id, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT count(*) AS in_dlq FROM pgmq.q_dl_dead;

-- The conditional read and read_with_poll take the same path.
SELECT s - :first_id AS id FROM pgmq.send('dl_jobs', '{"kind": "x"}') AS s;
UPDATE pgmq.q_dl_jobs SET read_ct = 2;
SELECT msg_id FROM pgmq.read('dl_jobs', 0, 10, '{"kind": "x"}');
SELECT count(*) AS left_in_queue, (SELECT count(*) FROM pgmq.q_dl_dead) AS in_dlq FROM pgmq.q_dl_jobs;
SELECT s - :first_id AS id FROM pgmq.send('dl_jobs', '{"n": 6}') AS s;
UPDATE pgmq.q_dl_jobs SET read_ct = 2;
SELECT msg_id FROM pgmq.read_with_poll('dl_jobs', 0, 10, 1, 10);
SELECT count(*) AS left_in_queue, (SELECT count(*) FROM pgmq.q_dl_dead) AS in_dlq FROM pgmq.q_dl_jobs;

-- Redrive: oldest first, the headers they had, visible at once, read_ct 0.
SELECT pgmq.redrive('dl_dead', 'dl_jobs', 2);
SELECT message, headers, read_ct FROM pgmq.q_dl_jobs ORDER BY msg_id;
SELECT pgmq.redrive('dl_dead', 'dl_jobs');
SELECT pgmq.redrive('dl_dead', 'dl_jobs');
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_dl_dead) AS in_dlq FROM pgmq.q_dl_jobs;
SELECT pgmq.redrive('dl_dead', 'dl_jobs', -1);
SELECT pgmq.redrive('dl_dead', 'dl_dead');
SELECT pgmq.purge_queue('dl_jobs');

-- Grouped reads: a head at the limit moves, and its group goes on.
SELECT pgmq.send('dl_jobs', '{"g": "a1"}', '{"x-pgmq-group": "a"}'::jsonb) IS NOT NULL AS sent;
SELECT pgmq.send('dl_jobs', '{"g": "a2"}', '{"x-pgmq-group": "a"}'::jsonb) IS NOT NULL AS sent;
SELECT pgmq.send('dl_jobs', '{"g": "b1"}', '{"x-pgmq-group": "b"}'::jsonb) IS NOT NULL AS sent;
UPDATE pgmq.q_dl_jobs SET read_ct = 2 WHERE message->>'g' = 'a1';
SELECT message FROM pgmq.read_grouped_head('dl_jobs', 0, 10);
SELECT message FROM pgmq.read_grouped_head('dl_jobs', 0, 10);
SELECT message FROM pgmq.q_dl_dead;
UPDATE pgmq.q_dl_jobs SET read_ct = 2 WHERE message->>'g' = 'b1';
SELECT message FROM pgmq.read_grouped('dl_jobs', 0, 10);
SELECT pgmq.create_fifo_index('dl_jobs');
UPDATE pgmq.q_dl_jobs SET read_ct = 2;
SELECT message FROM pgmq.read_grouped_rr('dl_jobs', 0, 10);
SELECT message FROM pgmq.q_dl_dead ORDER BY msg_id;
SELECT count(*) AS left_in_queue FROM pgmq.q_dl_jobs;

-- pop is at-most-once and ignores the policy.
SELECT pgmq.send('dl_jobs', '{"n": "pop"}') IS NOT NULL AS sent;
UPDATE pgmq.q_dl_jobs SET read_ct = 5;
SELECT message FROM pgmq.pop('dl_jobs');

-- A direct change of the policy row takes effect at once: its trigger
-- invalidates the policy this backend keeps.
SELECT pgmq.send('dl_jobs', '{"n": "direct"}') IS NOT NULL AS sent;
UPDATE pgmq.q_dl_jobs SET read_ct = 2;
UPDATE pgmq.policies SET max_deliveries = 3 WHERE queue_name = 'dl_jobs';
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT message FROM pgmq.q_dl_dead WHERE message->>'n' = 'direct';

-- Cleared, reads deliver past the limit again (the policy is read again).
SELECT pgmq.clear_dead_letter_queue('dl_jobs');
SELECT count(*) AS policies FROM pgmq.policies;
SELECT pgmq.send('dl_jobs', '{"n": "again"}') IS NOT NULL AS sent;
UPDATE pgmq.q_dl_jobs SET read_ct = 9;
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);

-- Dropping the dead-letter queue turns the policy off.
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_dead', 1);
SELECT pgmq.drop_queue('dl_dead');
SELECT queue_name, dead_letter_queue, max_deliveries FROM pgmq.list_policies();
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);

-- A dead-letter queue whose table was altered is refused, naming that
-- table, at the read that would move into it; nothing moves or is lost.
SELECT pgmq.create('dl_bad');
SELECT pgmq.set_dead_letter_queue('dl_jobs', 'dl_bad', 1);
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT pgmq.send('dl_jobs', '{"n": "kept"}') IS NOT NULL AS sent;
UPDATE pgmq.q_dl_jobs SET read_ct = 1;
ALTER TABLE pgmq.q_dl_bad ALTER COLUMN headers TYPE text;
SELECT message, read_ct FROM pgmq.read('dl_jobs', 0, 10);
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_dl_bad) AS in_dlq FROM pgmq.q_dl_jobs;
SELECT pgmq.drop_queue('dl_bad');

-- Dropping the queue removes its policy row.
SELECT pgmq.drop_queue('dl_jobs');
SELECT count(*) AS policies FROM pgmq.policies;
