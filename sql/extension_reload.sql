-- extension_reload: DROP EXTENSION / CREATE EXTENSION in one session (the
-- backend keeps the library and its cached plans loaded), and queue tables
-- surviving DROP EXTENSION [CASCADE] because they are not extension members
-- (API.md §2.10, §2.12). Ends with the extension installed.
\pset null '<NULL>'
SELECT pgmq.create('er_q');
SELECT pgmq.send('er_q', '{"n": 1}') AS first_id \gset
SELECT pgmq.send('er_q', '{"n": 2}') - :first_id AS rel_id;
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.read('er_q', 30, 1);
SELECT queue_length FROM pgmq.metrics('er_q');

-- Nothing depends on the extension but its own objects: a plain DROP works.
DROP EXTENSION pgmq;
-- The queue's tables and their messages survive; the schema stays, meta
-- (an extension member) goes.
SELECT relname FROM pg_class WHERE relnamespace = 'pgmq'::regnamespace AND relkind IN ('r', 'S')
   AND (relname LIKE '%er\_q%' OR relname = 'meta') ORDER BY relname;
SELECT msg_id - :first_id AS rel_id, read_ct, message FROM pgmq.q_er_q ORDER BY msg_id;
SELECT count(*) AS pgmq_functions FROM pg_proc WHERE pronamespace = 'pgmq'::regnamespace;
-- Without the extension the functions are gone.
SELECT pgmq.send('er_q', '{}');

CREATE EXTENSION pgmq;
-- Same session: every call works against the surviving tables (functions
-- never consult meta, which is empty now).
SELECT count(*) AS meta_rows FROM pgmq.meta;
SELECT pgmq.send('er_q', '{"n": 3}') - :first_id AS rel_id;
SELECT msg_id - :first_id AS rel_id, read_ct, message FROM pgmq.read('er_q', 30, 10) ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id FROM pgmq.set_vt('er_q', :first_id, 0);
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.pop('er_q');
SELECT pgmq.archive('er_q', :first_id + 1);
SELECT pgmq.delete('er_q', :first_id + 2);
SELECT queue_name, queue_length, total_messages FROM pgmq.metrics('er_q');
-- create registers the queue again: tables exist (NOTICEs), meta gets its row.
SELECT pgmq.create('er_q');
SELECT queue_name, is_partitioned, is_unlogged FROM pgmq.list_queues() WHERE queue_name = 'er_q';
SELECT queue_name, queue_length FROM pgmq.metrics_all() WHERE queue_name = 'er_q';

-- DROP EXTENSION ... CASCADE also leaves queue tables in place.
SELECT pgmq.send('er_q', '{"n": 4}') - :first_id AS rel_id;
DROP EXTENSION pgmq CASCADE;
SELECT to_regclass('pgmq.q_er_q') IS NOT NULL AS q_survives, to_regclass('pgmq.a_er_q') IS NOT NULL AS a_survives,
       to_regclass('pgmq.meta') IS NULL AS meta_gone;
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.q_er_q ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.a_er_q ORDER BY msg_id;

-- Dropped and created again inside one transaction, then used at once.
CREATE EXTENSION pgmq;
BEGIN;
DROP EXTENSION pgmq;
CREATE EXTENSION pgmq;
SELECT pgmq.send('er_q', '{"n": 5}') - :first_id AS rel_id;
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.read('er_q', 30, 10) ORDER BY msg_id;
COMMIT;
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.q_er_q ORDER BY msg_id;

-- A rolled-back DROP EXTENSION changes nothing.
BEGIN;
DROP EXTENSION pgmq;
ROLLBACK;
SELECT pgmq.create('er_q2');
SELECT pgmq.send('er_q2', '{"second": true}') > 0 AS sent;
SELECT message FROM pgmq.pop('er_q2');

-- Clean up. er_q has no meta row after the last reload; drop_queue goes by
-- its tables.
SELECT pgmq.drop_queue('er_q');
SELECT pgmq.drop_queue('er_q2');
SELECT relname FROM pg_class WHERE relnamespace = 'pgmq'::regnamespace AND relname LIKE '%er\_q%';
SELECT extname FROM pg_extension WHERE extname = 'pgmq';
