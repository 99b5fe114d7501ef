-- policy_deduplication: a send whose x-pgmq-deduplication-id was sent to
-- the queue within the window inserts nothing and returns the first msg_id,
-- for every send and send_batch overload, within one batch too; without the
-- header, or without the policy, nothing changes; after the window the id
-- is new again; maintenance expires old ids; the ids of one queue are
-- another queue's business only through its own policy.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

SELECT pgmq.create('dd_q');
SELECT pgmq.create('dd_other');

-- Without the policy the header is just a header.
SELECT s AS first_id FROM pgmq.send('dd_q', '{"n": 0}', '{"x-pgmq-deduplication-id": "a"}'::jsonb) AS s \gset
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 1}', '{"x-pgmq-deduplication-id": "a"}'::jsonb) AS s;

-- Arguments.
SELECT pgmq.set_deduplication('dd_q', '0 s');
SELECT pgmq.set_deduplication('dd_q', '-1 h');
SELECT pgmq.set_deduplication('dd_q', NULL);
SELECT pgmq.set_deduplication('dd_q', '1 hour');

-- The first send of an id inserts; the next ones return its msg_id.
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 2}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 3}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 4}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb, 5) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 5}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb, now()) AS s;
-- Ids are compared as ->> text: the number 7 and the string "7" are one id.
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 6}', '{"x-pgmq-deduplication-id": 7}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 7}', '{"x-pgmq-deduplication-id": "7"}'::jsonb) AS s;
-- No header, a JSON null, headers that are no object: no deduplication.
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 8}') AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 9}', '{"x-pgmq-deduplication-id": null}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 10}', '["x-pgmq-deduplication-id"]'::jsonb) AS s;
SELECT msg_id - :first_id AS id, message FROM pgmq.q_dd_q ORDER BY msg_id;

-- Batches: duplicates collapse to the first element, and to earlier sends.
SELECT s - :first_id AS id FROM pgmq.send_batch('dd_q',
    ARRAY['{"b": 1}', '{"b": 2}', '{"b": 3}', '{"b": 4}', '{"b": 5}']::jsonb[],
    ARRAY['{"x-pgmq-deduplication-id": "k"}', '{"x-pgmq-deduplication-id": "order-1"}',
          '{"x-pgmq-deduplication-id": "k"}', NULL, '{}']::jsonb[]) AS s;
SELECT s - :first_id AS id FROM pgmq.send_batch('dd_q', ARRAY['{"b": 6}', '{"b": 7}']::jsonb[],
    ARRAY['{"x-pgmq-deduplication-id": "k"}', '{"x-pgmq-deduplication-id": "new"}']::jsonb[], 0) AS s;
SELECT s - :first_id AS id FROM pgmq.send_batch('dd_q', ARRAY['{"b": 8}']::jsonb[]) AS s;
SELECT msg_id - :first_id AS id, message FROM pgmq.q_dd_q WHERE message ? 'b' ORDER BY msg_id;
SELECT deduplication_id, msg_id - :first_id AS id, expires_at > now() + interval '59 min' AS in_window
FROM pgmq.deduplication ORDER BY deduplication_id;

-- The same id in one transaction, and a rolled-back first send.
BEGIN;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"t": 1}', '{"x-pgmq-deduplication-id": "tx"}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"t": 2}', '{"x-pgmq-deduplication-id": "tx"}'::jsonb) AS s;
ROLLBACK;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"t": 3}', '{"x-pgmq-deduplication-id": "tx"}'::jsonb) AS s;
SELECT message FROM pgmq.q_dd_q WHERE message ? 't';

-- Another queue has its own ids (and no policy).
SELECT pgmq.set_deduplication('dd_other', '1 hour');
SELECT s > 0 AS new_message FROM pgmq.send('dd_other', '{"o": 1}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb) AS s;

-- After the window the id is new again (its row taken over).
UPDATE pgmq.deduplication SET expires_at = now() - interval '1 s' WHERE deduplication_id = 'order-1' AND queue_name = 'dd_q';
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 11}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb) AS s;
SELECT s - :first_id AS id FROM pgmq.send('dd_q', '{"n": 12}', '{"x-pgmq-deduplication-id": "order-1"}'::jsonb) AS s;

-- Maintenance expires ids past their window, in batches.
UPDATE pgmq.deduplication SET expires_at = now() - interval '1 s' WHERE queue_name = 'dd_q' AND deduplication_id <> 'k';
CALL pgmq.run_partition_maintenance();
SELECT queue_name, deduplication_id FROM pgmq.deduplication ORDER BY 1, 2;

-- Cleared: the header is just a header again, and the ids are forgotten.
SELECT pgmq.clear_deduplication('dd_q');
SELECT queue_name, deduplication_id FROM pgmq.deduplication ORDER BY 1, 2;
SELECT s - :first_id > 0 AS new_message FROM pgmq.send('dd_q', '{"n": 13}', '{"x-pgmq-deduplication-id": "k"}'::jsonb) AS s;

-- Dropping a queue removes its ids.
SELECT pgmq.drop_queue('dd_q');
SELECT pgmq.drop_queue('dd_other');
SELECT count(*) AS ids_left FROM pgmq.deduplication;
SELECT count(*) AS policies FROM pgmq.policies;
