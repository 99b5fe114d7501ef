-- consume.sql's work in plain SQL: read 100, delete them.
BEGIN;
WITH r AS (
  UPDATE base.q_bq SET vt = clock_timestamp() + interval '30 s', read_ct = read_ct + 1, last_read_at = clock_timestamp()
  WHERE msg_id IN (SELECT msg_id FROM base.q_bq WHERE vt <= clock_timestamp() ORDER BY msg_id LIMIT 100 FOR UPDATE SKIP LOCKED)
  RETURNING msg_id)
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM r \gset
DELETE FROM base.q_bq WHERE msg_id = ANY (:ids::bigint[]);
COMMIT;
