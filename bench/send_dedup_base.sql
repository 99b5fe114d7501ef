-- The same in plain SQL, with the same guarantees in one statement (pgmq's
-- SendDeduplicated): an id seen within the window inserts nothing and
-- returns the first msg_id; a new one inserts the message and its id's row.
\set id random(1, 9000000000000000000)
WITH pre AS (SELECT d.msg_id FROM base.deduplication AS d
             WHERE d.queue_name = 'bq' AND d.deduplication_id = :id::text AND (d.expires_at > now()) IS TRUE),
m AS (INSERT INTO base.q_bq (vt, message, headers)
      SELECT now(), :payload, jsonb_build_object('x-pgmq-deduplication-id', :id::text)
      WHERE NOT EXISTS (SELECT FROM pre) RETURNING msg_id),
d AS (INSERT INTO base.deduplication AS d (queue_name, deduplication_id, msg_id, expires_at)
      SELECT 'bq', :id::text, m.msg_id, now() + interval '1 hour' FROM m
      ON CONFLICT (queue_name, deduplication_id) DO UPDATE SET msg_id = EXCLUDED.msg_id, expires_at = EXCLUDED.expires_at
      WHERE d.expires_at <= now() RETURNING d.deduplication_id)
SELECT COALESCE((SELECT msg_id FROM pre), (SELECT msg_id FROM m)), EXISTS (SELECT FROM m) AND NOT EXISTS (SELECT FROM d);
