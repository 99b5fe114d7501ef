-- metrics: every column of metrics_result, metrics_all (API.md §1.1, §2.7).
-- Ages are made exact by moving enqueued_at back inside one transaction;
-- scrape_time is checked against now().
\pset null '<NULL>'
SELECT pgmq.create('met_q');
SELECT pgmq.create_unlogged('met_q2');

-- Column order of metrics_result is API.
SELECT * FROM pgmq.metrics('met_q') LIMIT 0;
SELECT pg_typeof(pgmq.metrics('met_q'));

-- An empty queue: no ages, nothing sent yet, not partitioned.
SELECT queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
       scrape_time = now() AS scrape_time_is_now, queue_visible_length, default_partition_length
  FROM pgmq.metrics('met_q');

-- Three messages, one delayed: all count in queue_length, the delayed one
-- is not visible.
SELECT pgmq.send('met_q', '{"n": 1}') AS first_id \gset
SELECT pgmq.send('met_q', '{"n": 2}') - :first_id AS rel_id;
SELECT pgmq.send('met_q', '{"n": 3}', 100) - :first_id AS rel_id;
BEGIN;
UPDATE pgmq.q_met_q SET enqueued_at = now() - interval '100 seconds' WHERE msg_id = :first_id;
UPDATE pgmq.q_met_q SET enqueued_at = now() - interval '10 seconds' WHERE msg_id = :first_id + 1;
UPDATE pgmq.q_met_q SET enqueued_at = now() - interval '2.4 seconds' WHERE msg_id = :first_id + 2;
SELECT queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
       scrape_time = now() AS scrape_time_is_now, queue_visible_length, default_partition_length
  FROM pgmq.metrics('met_q');
-- Ages are rounded to whole seconds.
UPDATE pgmq.q_met_q SET enqueued_at = now() - interval '2.6 seconds' WHERE msg_id = :first_id + 2;
SELECT newest_msg_age_sec, oldest_msg_age_sec FROM pgmq.metrics('met_q');
COMMIT;

-- A read message is invisible: queue_length stays, queue_visible_length drops.
SELECT msg_id - :first_id AS rel_id FROM pgmq.read('met_q', 30, 1);
SELECT queue_length, queue_visible_length FROM pgmq.metrics('met_q');

-- queue_visible_length compares vt with now(), the transaction start: a
-- message sent earlier in the same transaction (vt = clock time) is not
-- counted as visible yet, though read() would see it.
BEGIN;
SELECT pgmq.send('met_q', '{"n": 4}') - :first_id AS rel_id;
SELECT queue_length, queue_visible_length FROM pgmq.metrics('met_q');
COMMIT;
SELECT queue_length, queue_visible_length FROM pgmq.metrics('met_q');

-- total_messages is the highest msg_id ever allocated: rolled-back sends
-- count, and it survives purge (and delete/archive/pop).
BEGIN;
SELECT pgmq.send('met_q', '{"n": "rolled back"}') - :first_id AS rel_id;
ROLLBACK;
SELECT queue_length, total_messages FROM pgmq.metrics('met_q');
SELECT pgmq.delete('met_q', :first_id + 1);
SELECT pgmq.archive('met_q', :first_id + 3);
SELECT queue_length, total_messages FROM pgmq.metrics('met_q');
SELECT pgmq.purge_queue('met_q');
SELECT queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages, queue_visible_length
  FROM pgmq.metrics('met_q');

-- queue_name echoes the argument as given, not the meta spelling.
SELECT queue_name, queue_length FROM pgmq.metrics('MET_Q');

-- metrics_all: one row per meta row; the same values as metrics().
SELECT pgmq.send_batch('met_q2', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[]) > 0 AS sent;
SELECT queue_name, queue_length, newest_msg_age_sec IS NOT NULL AS has_newest_age, total_messages,
       scrape_time = now() AS scrape_time_is_now, queue_visible_length, default_partition_length
  FROM pgmq.metrics_all() WHERE queue_name LIKE 'met\_%' ORDER BY queue_name;
SELECT (SELECT count(*) FROM pgmq.metrics_all()) = (SELECT count(*) FROM pgmq.meta) AS one_row_per_queue;
SELECT pg_typeof(m) FROM pgmq.metrics_all() AS m LIMIT 1;

-- On a queue that does not exist.
SELECT * FROM pgmq.metrics('met_missing');

SELECT pgmq.drop_queue('met_q');
SELECT pgmq.drop_queue('met_q2');
-- With no queues left of ours, metrics_all still works.
SELECT count(*) FROM pgmq.metrics_all() WHERE queue_name LIKE 'met\_%';
