-- The same in plain SQL: the message and its id's row in one statement, an
-- id seen within the window taking nothing (pgmq's SendDeduplicated).
\set id random(1, 9000000000000000000)
WITH m AS (INSERT INTO base.q_bq (vt, message, headers)
           VALUES (now(), :payload, jsonb_build_object('x-pgmq-deduplication-id', :id::text)) RETURNING msg_id),
d AS (INSERT INTO base.deduplication AS d (queue_name, deduplication_id, msg_id, expires_at)
      SELECT 'bq', :id::text, m.msg_id, now() + interval '1 hour' FROM m
      ON CONFLICT (queue_name, deduplication_id) DO UPDATE SET msg_id = EXCLUDED.msg_id, expires_at = EXCLUDED.expires_at
      WHERE d.expires_at <= now() RETURNING d.msg_id)
SELECT m.msg_id, EXISTS (SELECT FROM d) FROM m;
