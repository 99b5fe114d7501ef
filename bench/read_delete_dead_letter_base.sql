-- Read 10 visible messages with a dead-letter limit, then delete them, in
-- one transaction, in plain SQL: those delivered 5 times move to the
-- dead-letter table in the read's statement, the others are claimed
-- (pgmq's ReadDeadLetter). pgmq's side is read_delete.sql on a queue with
-- set_dead_letter_queue(..., 5).
BEGIN;
WITH picked AS (
  SELECT msg_id FROM base.q_bq WHERE msg_id = ANY (ARRAY(
    SELECT msg_id FROM base.q_bq WHERE vt <= clock_timestamp() ORDER BY msg_id LIMIT 10 FOR UPDATE SKIP LOCKED))),
moved AS (DELETE FROM base.q_bq AS q USING picked AS p WHERE q.msg_id = p.msg_id AND q.read_ct >= 5
          RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.message, q.headers),
dead AS (INSERT INTO base.q_bq_dead (vt, message, headers)
         SELECT clock_timestamp(), m.message, COALESCE(m.headers, '{}') || jsonb_build_object('x-pgmq-dead-letter',
           jsonb_build_object('queue', 'bq', 'msg_id', m.msg_id, 'read_ct', m.read_ct, 'enqueued_at', m.enqueued_at,
                              'moved_at', clock_timestamp())) FROM moved AS m),
r AS (UPDATE base.q_bq AS q SET vt = clock_timestamp() + interval '30 s', read_ct = q.read_ct + 1,
        last_read_at = clock_timestamp() FROM picked AS p WHERE q.msg_id = p.msg_id AND q.read_ct < 5
      RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers)
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM r \gset
DELETE FROM base.q_bq WHERE msg_id = ANY (:ids::bigint[]) RETURNING msg_id;
COMMIT;
