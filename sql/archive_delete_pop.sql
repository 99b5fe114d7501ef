-- archive_delete_pop: delete, archive and pop (API.md §2.6).
-- msg_ids relative to the first id; times as facts only.
\pset null '<NULL>'
SELECT pgmq.create('adp_q');
SELECT min(id) AS first_id FROM pgmq.send_batch('adp_q',
       ARRAY(SELECT jsonb_build_object('n', g) FROM generate_series(0, 9) g),
       ARRAY(SELECT jsonb_build_object('h', g) FROM generate_series(0, 9) g)) AS t(id) \gset

-------------------------------------------------------------------------------
-- delete
-------------------------------------------------------------------------------
-- Single: true when the row existed, false otherwise.
SELECT pgmq.delete('adp_q', :first_id);
SELECT pgmq.delete('adp_q', :first_id);
SELECT pgmq.delete('adp_q', :first_id + 1000);
SELECT pg_typeof(pgmq.delete('adp_q', :first_id + 1000));
-- No visibility check: an invisible (read) message can be deleted.
SELECT msg_id - :first_id AS rel_id FROM pgmq.read('adp_q', 30, 1);
SELECT pgmq.delete('adp_q', :first_id + 1);
-- Batch: the ids actually deleted; missing and already-deleted ids are left out.
SELECT msg_id - :first_id AS rel_id
  FROM pgmq.delete('adp_q', ARRAY[:first_id + 2, :first_id + 1000, :first_id, :first_id + 3]::bigint[]) AS t(msg_id)
 ORDER BY 1;
SELECT count(*) FROM pgmq.delete('adp_q', ARRAY[:first_id + 1000, :first_id + 1001]::bigint[]);
SELECT count(*) FROM pgmq.delete('adp_q', ARRAY[]::bigint[]);
-- Deleted rows are gone from the queue and never reach the archive.
SELECT msg_id - :first_id AS rel_id FROM pgmq.q_adp_q ORDER BY msg_id;
SELECT count(*) AS archived FROM pgmq.a_adp_q;

-------------------------------------------------------------------------------
-- archive
-------------------------------------------------------------------------------
-- Read message 4 first so the archive shows read_ct and last_read_at moving along.
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('adp_q', 30, 1);
SELECT vt AS m4_vt, enqueued_at AS m4_enqueued_at, last_read_at AS m4_last_read_at
  FROM pgmq.q_adp_q WHERE msg_id = :first_id + 4 \gset
-- Single: true/false. archived_at is now() of the archiving transaction.
BEGIN;
SELECT pgmq.archive('adp_q', :first_id + 4);
SELECT msg_id - :first_id AS rel_id, read_ct, message, headers,
       archived_at = now() AS archived_now,
       vt = :'m4_vt'::timestamptz AS vt_kept,
       enqueued_at = :'m4_enqueued_at'::timestamptz AS enqueued_at_kept,
       last_read_at = :'m4_last_read_at'::timestamptz AS last_read_at_kept
  FROM pgmq.a_adp_q ORDER BY msg_id;
COMMIT;
SELECT pgmq.archive('adp_q', :first_id + 4);
SELECT pgmq.archive('adp_q', :first_id + 1000);
SELECT count(*) AS still_in_queue FROM pgmq.q_adp_q WHERE msg_id = :first_id + 4;
-- Batch: the ids actually moved; missing ids are left out. Headers, read_ct
-- and vt come along; archived_at is set.
SELECT msg_id - :first_id AS rel_id
  FROM pgmq.archive('adp_q', ARRAY[:first_id + 5, :first_id + 1000, :first_id + 6, :first_id + 4]::bigint[]) AS t(msg_id)
 ORDER BY 1;
SELECT count(*) FROM pgmq.archive('adp_q', ARRAY[:first_id + 1000]::bigint[]);
SELECT count(*) FROM pgmq.archive('adp_q', ARRAY[]::bigint[]);
SELECT msg_id - :first_id AS rel_id, read_ct, message, headers, archived_at IS NOT NULL AS has_archived_at,
       archived_at <= now() AS archived_before_now, last_read_at IS NOT NULL AS has_last_read_at
  FROM pgmq.a_adp_q ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id FROM pgmq.q_adp_q ORDER BY msg_id;
-- An archived message can no longer be read, deleted or archived again.
SELECT pgmq.delete('adp_q', :first_id + 5);
SELECT count(*) FROM pgmq.read('adp_q', 30, 10, '{"n": 5}');
-- A NULL message and NULL headers archive as NULLs.
SELECT pgmq.send('adp_q', NULL) AS null_id \gset
SELECT pgmq.archive('adp_q', :null_id);
SELECT message, headers FROM pgmq.a_adp_q WHERE msg_id = :null_id;
-- The archive rolls back with its transaction.
BEGIN;
SELECT pgmq.archive('adp_q', :first_id + 7);
ROLLBACK;
SELECT count(*) AS in_queue FROM pgmq.q_adp_q WHERE msg_id = :first_id + 7;
SELECT count(*) AS in_archive FROM pgmq.a_adp_q WHERE msg_id = :first_id + 7;

-------------------------------------------------------------------------------
-- pop: deletes and returns visible messages, lowest id first, as stored.
-------------------------------------------------------------------------------
SELECT pgmq.purge_queue('adp_q');
SELECT min(id) AS first_id FROM pgmq.send_batch('adp_q',
       ARRAY(SELECT jsonb_build_object('p', g) FROM generate_series(0, 5) g)) AS t(id) \gset
-- Make message 1 invisible and message 2 read-but-visible (vt 0).
SELECT msg_id - :first_id AS rel_id FROM pgmq.set_vt('adp_q', :first_id + 1, 100);
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('adp_q', 0, 1, '{"p": 2}');
-- pop(q): one message, the lowest visible id.
SELECT msg_id - :first_id AS rel_id, read_ct, message, last_read_at, vt <= clock_timestamp() AS was_visible
  FROM pgmq.pop('adp_q');
-- pop(q, qty): skips the invisible message; returns the row as stored, so
-- read_ct and last_read_at are not changed by the pop.
SELECT msg_id - :first_id AS rel_id, read_ct, message, last_read_at IS NOT NULL AS has_last_read_at
  FROM pgmq.pop('adp_q', 2) ORDER BY msg_id;
-- Popped messages are gone (and not archived).
SELECT msg_id - :first_id AS rel_id FROM pgmq.q_adp_q ORDER BY msg_id;
SELECT count(*) FROM pgmq.a_adp_q WHERE message ? 'p';
-- qty 0, and more than there is.
SELECT count(*) FROM pgmq.pop('adp_q', 0);
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.pop('adp_q', 100) ORDER BY msg_id;
-- Only the invisible message is left: pop returns nothing.
SELECT count(*) FROM pgmq.pop('adp_q');
SELECT count(*) FROM pgmq.pop('adp_q', 10);
SELECT msg_id - :first_id AS rel_id FROM pgmq.q_adp_q;
-- A pop rolls back with its transaction.
SELECT count(*) FROM pgmq.set_vt('adp_q', :first_id + 1, 0);
BEGIN;
SELECT msg_id - :first_id AS rel_id FROM pgmq.pop('adp_q');
ROLLBACK;
SELECT msg_id - :first_id AS rel_id FROM pgmq.pop('adp_q');
-- Return types of pop, delete and archive.
SELECT oid::regprocedure, prorettype::regtype, proretset FROM pg_proc
 WHERE pronamespace = 'pgmq'::regnamespace AND proname IN ('pop', 'delete', 'archive')
 ORDER BY oid::regprocedure::text;

-- On a queue that does not exist.
SELECT pgmq.delete('adp_missing', 1);
SELECT pgmq.delete('adp_missing', ARRAY[1]::bigint[]);
SELECT pgmq.archive('adp_missing', 1);
SELECT pgmq.archive('adp_missing', ARRAY[1]::bigint[]);
SELECT * FROM pgmq.pop('adp_missing');

SELECT pgmq.drop_queue('adp_q');
