-- pause_peek_move: pause and resume (every read path returns nothing while
-- a queue is paused, sends are kept, queue_state says so, only
-- the owner may), peek (msg_id order, visible or not, nothing leased,
-- SELECT only), move (new ids in the target, headers kept plus
-- x-pgmq-moved-from, atomic) and unarchive (back with their ids, visible at
-- once, even below the queue's head).
\set VERBOSITY terse
SET client_min_messages = warning;
-- Rescans would repair a head that hides a message: never, here.
SET pgmq.queue_head_refresh_interval = 0;
SET pgmq.queue_head_rescan_interval = '1h';

SELECT pgmq.create('ppm_q');
SELECT pgmq.create('ppm_target');
SELECT pgmq.create('ppm_dlq');
SELECT count(*) FROM pgmq.send_batch('ppm_q', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[],
                                      ARRAY['{"x-pgmq-group": "g"}', '{"k": "v"}', 'null', '[1]']::jsonb[]);

-------------------------------------------------------------------------------
-- peek
-------------------------------------------------------------------------------
SELECT msg_id, read_ct, message FROM pgmq.peek('ppm_q', 2);
SELECT msg_id FROM pgmq.read('ppm_q', 30, 1);
-- The leased message is shown, still leased, read_ct unchanged; paging by after_msg_id.
SELECT msg_id, read_ct, vt > now() AS leased FROM pgmq.peek('ppm_q');
SELECT msg_id FROM pgmq.peek('ppm_q', 10, 2);
SELECT msg_id, read_ct FROM pgmq.peek('ppm_q', 10, 0) WHERE msg_id = 1;
SELECT count(*) FROM pgmq.peek('ppm_q', 0);
SELECT * FROM pgmq.peek('ppm_q', -1);
SELECT * FROM pgmq.peek('ppm_q', NULL);
SELECT * FROM pgmq.peek('ppm_q', 1, NULL);
SELECT * FROM pgmq.peek('ppm_missing');

-------------------------------------------------------------------------------
-- pause and resume
-------------------------------------------------------------------------------
UPDATE pgmq.q_ppm_q SET vt = now();
SELECT pgmq.set_dead_letter_queue('ppm_q', 'ppm_dlq', 5);
SELECT pgmq.pause('ppm_q');
SELECT pgmq.send('ppm_q', '{"n": 5}');
SELECT count(*) AS read FROM pgmq.read('ppm_q', 30, 10);
SELECT count(*) AS read_conditional FROM pgmq.read('ppm_q', 30, 10, '{"n": 2}');
SELECT count(*) AS read_with_poll FROM pgmq.read_with_poll('ppm_q', 30, 10, 1, 100);
SELECT count(*) AS pop FROM pgmq.pop('ppm_q', 10);
SELECT count(*) AS read_grouped FROM pgmq.read_grouped('ppm_q', 30, 10);
SELECT count(*) AS read_grouped_rr FROM pgmq.read_grouped_rr('ppm_q', 30, 10);
SELECT queue_name, paused, paused_at IS NOT NULL AS since, visible_length, leased_length, delayed_length
  FROM pgmq.queue_state_all() ORDER BY queue_name;
SELECT queue_name, queue_length, queue_visible_length FROM pgmq.metrics('ppm_q');
-- list_policies shows delivery policies, not a pause.
SELECT queue_name, dead_letter_queue FROM pgmq.list_policies();
-- Pausing twice is fine; so is resuming a queue that is not paused.
SELECT pgmq.pause('ppm_q');
SELECT pgmq.resume('ppm_target');
SELECT pgmq.pause('ppm_missing');
-- The pause is the owner's: another role may read, not pause or resume.
CREATE ROLE regress_ppm_reader;
GRANT USAGE ON SCHEMA pgmq TO regress_ppm_reader;
GRANT SELECT, UPDATE, DELETE ON pgmq.q_ppm_q TO regress_ppm_reader;
SET ROLE regress_ppm_reader;
SELECT pgmq.resume('ppm_q');
SELECT count(*) AS read_as_reader FROM pgmq.read('ppm_q', 30, 10);
UPDATE pgmq.policies SET paused_at = NULL;
-- peek needs SELECT only: the reader sees what it may not claim.
SELECT count(*) AS peeked FROM pgmq.peek('ppm_q');
RESET ROLE;
-- A rolled-back resume changes nothing; a committed one lets reads claim.
BEGIN;
SELECT pgmq.resume('ppm_q');
ROLLBACK;
SELECT count(*) AS still_paused FROM pgmq.read('ppm_q', 30, 10);
SELECT pgmq.resume('ppm_q');
SELECT msg_id FROM pgmq.read('ppm_q', 0, 2);
SELECT msg_id FROM pgmq.pop('ppm_q');
SELECT queue_name, paused, paused_at FROM pgmq.queue_state('ppm_q');
-- Clearing the dead letters keeps no empty policy row behind.
SELECT pgmq.clear_dead_letter_queue('ppm_q');
SELECT count(*) AS policy_rows FROM pgmq.policies;

-------------------------------------------------------------------------------
-- move
-------------------------------------------------------------------------------
-- Messages 2, 3, 4 (object, JSON null and array headers) and an unknown id.
SELECT * FROM pgmq.move('ppm_q', 'ppm_target', ARRAY[2, 3, 4, 99]);
SELECT msg_id, read_ct, vt <= now() AS visible, message, headers FROM pgmq.peek('ppm_target');
SELECT msg_id FROM pgmq.peek('ppm_q');
SELECT * FROM pgmq.move('ppm_q', 'ppm_q', ARRAY[5]);
SELECT * FROM pgmq.move('ppm_q', 'ppm_missing', ARRAY[5]);
SELECT count(*) FROM pgmq.move('ppm_q', 'ppm_target', NULL);
-- All or nothing: a target that refuses one row keeps every message where it was.
ALTER TABLE pgmq.q_ppm_target ADD CONSTRAINT no_six CHECK (message->>'n' <> '6');
SELECT pgmq.send('ppm_q', '{"n": 6}') AS six \gset
SELECT * FROM pgmq.move('ppm_q', 'ppm_target', ARRAY[5, :six]);
SELECT msg_id FROM pgmq.peek('ppm_q');
ALTER TABLE pgmq.q_ppm_target DROP CONSTRAINT no_six;
-- Moving needs DELETE on the source and INSERT on the target.
SET ROLE regress_ppm_reader;
SELECT * FROM pgmq.move('ppm_q', 'ppm_target', ARRAY[5]);
RESET ROLE;
SELECT msg_id FROM pgmq.peek('ppm_q');

-------------------------------------------------------------------------------
-- unarchive
-------------------------------------------------------------------------------
SELECT pgmq.archive('ppm_q', ARRAY[5, 6]);
-- Read and delete until the queue's head is past 6: a new message 7 is its only one.
SELECT pgmq.send('ppm_q', '{"n": 7}');
SELECT msg_id FROM pgmq.read('ppm_q', 0, 1);
SELECT msg_id FROM pgmq.read('ppm_q', 0, 1);
SELECT * FROM pgmq.unarchive('ppm_q', ARRAY[6, 5, 42]);
SELECT msg_id, read_ct, message FROM pgmq.read('ppm_q', 30, 10);
SELECT count(*) AS archived FROM pgmq.a_ppm_q;
-- Unarchiving what is not archived, or an id the queue already has, changes nothing.
SELECT count(*) FROM pgmq.unarchive('ppm_q', ARRAY[5]);
SELECT pgmq.archive('ppm_q', 5);
INSERT INTO pgmq.q_ppm_q (msg_id, vt, message) OVERRIDING SYSTEM VALUE VALUES (5, now(), '{"n": "copy"}');
SELECT * FROM pgmq.unarchive('ppm_q', ARRAY[5]);
SELECT count(*) AS archived FROM pgmq.a_ppm_q;
SELECT * FROM pgmq.unarchive('ppm_missing', ARRAY[1]);
-- In one transaction: a read whose refresh keeps a raise of the queue's head
-- (1 -> 8) for its commit, then an unarchive of 3, between the two. The raise
-- is dropped at the commit, and the next read returns 3.
SELECT pgmq.create('ppm_head');
SELECT count(*) FROM pgmq.send_batch('ppm_head', ARRAY(SELECT jsonb_build_object('n', i) FROM generate_series(1, 10) i));
SELECT count(*) AS head_added FROM pgmq.read('ppm_head', 0, 1);
SELECT count(*) AS head_at_one FROM pgmq.read('ppm_head', 0, 1);
SELECT count(*) FROM pgmq.archive('ppm_head', ARRAY[1, 2, 3, 4, 5, 6, 7]::bigint[]);
BEGIN;
SELECT msg_id FROM pgmq.read('ppm_head', 30, 1);
SELECT * FROM pgmq.unarchive('ppm_head', ARRAY[3]);
COMMIT;
SELECT msg_id FROM pgmq.read('ppm_head', 30, 10) ORDER BY msg_id;
SELECT pgmq.drop_queue('ppm_head');

SELECT pgmq.drop_queue('ppm_q');
SELECT pgmq.drop_queue('ppm_target');
SELECT pgmq.drop_queue('ppm_dlq');
REVOKE ALL ON SCHEMA pgmq FROM regress_ppm_reader;
DROP ROLE regress_ppm_reader;
