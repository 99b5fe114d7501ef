-- Read the 10 visible messages of highest priority (x-pgmq-priority, then
-- lowest msg_id), then delete them, in one transaction, in plain SQL on a
-- table with the same priority index as pgmq's (bench/run creates it).
-- pgmq's side is read_delete.sql on a queue with set_priority.
BEGIN;
WITH r AS (
  UPDATE base.q_bq SET vt = clock_timestamp() + interval '30 s', read_ct = read_ct + 1, last_read_at = clock_timestamp()
  WHERE msg_id IN (SELECT msg_id FROM base.q_bq WHERE vt <= clock_timestamp()
                   ORDER BY COALESCE(CASE WHEN jsonb_typeof(headers -> 'x-pgmq-priority') = 'number'
                                     THEN GREATEST(LEAST(floor((headers ->> 'x-pgmq-priority')::numeric), 9), 0) END,
                                     0)::int DESC, msg_id
                   LIMIT 10 FOR UPDATE SKIP LOCKED)
  RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM r \gset
DELETE FROM base.q_bq WHERE msg_id = ANY (:ids::bigint[]) RETURNING msg_id;
COMMIT;
