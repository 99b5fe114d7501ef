-- policy_retention: messages and archived messages older than the policy's
-- ages are deleted by apply_retention and by the maintenance procedure, in
-- batches that skip rows other transactions hold; partitioned queues keep
-- pg_partman's retention.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

SELECT pgmq.create('rn_q');
SELECT pgmq.apply_retention('rn_q');
SELECT pgmq.set_retention('rn_q', NULL, NULL);
SELECT pgmq.set_retention('rn_q', '0 s');
SELECT pgmq.set_retention('rn_q', '1 hour', '-1 day');
SELECT pgmq.set_retention('rn_q', '1 hour', '1 day');

SELECT count(*) FROM pgmq.send_batch('rn_q', (SELECT array_agg(jsonb_build_object('n', i)) FROM generate_series(1, 2500) i));
SELECT count(*) FROM pgmq.archive('rn_q', ARRAY(SELECT msg_id FROM pgmq.q_rn_q ORDER BY msg_id LIMIT 10));
UPDATE pgmq.q_rn_q SET enqueued_at = now() - interval '2 hours' WHERE (message->>'n')::int <= 2200;
UPDATE pgmq.a_rn_q SET archived_at = now() - interval '2 days' WHERE (message->>'n')::int <= 5;

-- 2190 old messages in three batches, 5 old archived messages.
SELECT pgmq.apply_retention('rn_q');
SELECT count(*) AS queue, (SELECT count(*) FROM pgmq.a_rn_q) AS archive FROM pgmq.q_rn_q;
SELECT min((message->>'n')::int) AS oldest_left FROM pgmq.q_rn_q;
SELECT pgmq.apply_retention('rn_q');

-- The maintenance procedure applies it too.
UPDATE pgmq.q_rn_q SET enqueued_at = now() - interval '2 hours' WHERE (message->>'n')::int <= 2300;
CALL pgmq.run_partition_maintenance();
SELECT count(*) AS queue FROM pgmq.q_rn_q;

-- Only archive retention.
SELECT pgmq.set_retention('rn_q', NULL, '1 hour');
UPDATE pgmq.q_rn_q SET enqueued_at = now() - interval '2 hours';
UPDATE pgmq.a_rn_q SET archived_at = now() - interval '2 hours';
SELECT pgmq.apply_retention('rn_q');
SELECT count(*) AS queue, (SELECT count(*) FROM pgmq.a_rn_q) AS archive FROM pgmq.q_rn_q;
SELECT queue_name, retention_max_age, retention_archive_max_age FROM pgmq.list_policies();

SELECT pgmq.clear_retention('rn_q');
SELECT pgmq.apply_retention('rn_q');
SELECT count(*) AS policies FROM pgmq.policies;
SELECT pgmq.drop_queue('rn_q');

-- A partitioned queue keeps pg_partman's retention for its messages.
SELECT pgmq.create_partitioned('rn_part', '10', '100');
SELECT pgmq.set_retention('rn_part', '1 hour');
SELECT pgmq.set_retention('rn_part', NULL, '1 hour');
SELECT pgmq.drop_queue('rn_part');
