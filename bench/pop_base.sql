DELETE FROM base.q_bq
WHERE msg_id IN (SELECT msg_id FROM base.q_bq WHERE vt <= clock_timestamp() ORDER BY msg_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers;
