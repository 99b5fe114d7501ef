INSERT INTO base.q_bq (vt, message) VALUES (now(), :payload) RETURNING msg_id;
BEGIN;
WITH r AS (
  UPDATE base.q_bq SET vt = clock_timestamp() + interval '30 s', read_ct = read_ct + 1, last_read_at = clock_timestamp()
  WHERE msg_id IN (SELECT msg_id FROM base.q_bq WHERE vt <= clock_timestamp() ORDER BY msg_id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM r \gset
DELETE FROM base.q_bq WHERE msg_id = ANY (:ids::bigint[]) RETURNING msg_id;
COMMIT;
