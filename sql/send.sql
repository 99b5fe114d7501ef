-- send: the six send and six send_batch overloads (API.md §1.3, §2.3).
-- msg_ids are shown relative to the first id of the queue; times only as
-- facts (vt relative to now(), enqueued_at = now()).
\pset null '<NULL>'
SELECT pgmq.create('send_q');

-- send(q, msg): one row, the new id; vt = clock time, so visible at once.
SELECT pgmq.send('send_q', '{"overload": 1}') AS first_id \gset
SELECT pg_typeof(:first_id::bigint);

-- Stored row of a plain send: read_ct 0, last_read_at NULL, headers NULL,
-- enqueued_at = now() of the sending transaction, vt no later than commit.
BEGIN;
SELECT pgmq.send('send_q', '{"overload": "txn"}') - :first_id AS rel_id;
SELECT read_ct, last_read_at, headers, enqueued_at = now() AS enqueued_now,
       vt >= now() AND vt <= clock_timestamp() AS vt_is_send_time
  FROM pgmq.q_send_q WHERE message = '{"overload": "txn"}';
COMMIT;

-- send(q, msg, headers jsonb)
SELECT pgmq.send('send_q', '{"overload": 2}', '{"x-trace": "abc", "n": [1, 2]}'::jsonb) - :first_id AS rel_id;
-- send(q, msg, delay int)
SELECT pgmq.send('send_q', '{"overload": 3}', 100) - :first_id AS rel_id;
-- send(q, msg, delay timestamptz)
SELECT pgmq.send('send_q', '{"overload": 4}', '2099-01-01 00:00:00+00'::timestamptz) - :first_id AS rel_id;
-- send(q, msg, headers, delay int)
SELECT pgmq.send('send_q', '{"overload": 5}', '{"h": 5}'::jsonb, 200) - :first_id AS rel_id;
-- send(q, msg, headers, delay timestamptz)
SELECT pgmq.send('send_q', '{"overload": 6}', '{"h": 6}'::jsonb, '2098-06-15 12:00:00+00'::timestamptz) - :first_id AS rel_id;

SELECT msg_id - :first_id AS rel_id, read_ct, last_read_at, message, headers,
       CASE WHEN vt <= now() THEN 'visible'
            WHEN vt BETWEEN now() + interval '99 seconds' AND now() + interval '101 seconds' THEN 'now + 100s'
            WHEN vt BETWEEN now() + interval '199 seconds' AND now() + interval '201 seconds' THEN 'now + 200s'
            ELSE vt::text END AS vt
  FROM pgmq.q_send_q ORDER BY msg_id;

-- Only the undelayed messages are readable.
SELECT msg_id - :first_id AS rel_id, message FROM pgmq.read('send_q', 30, 10);

-- A NULL message is accepted and read back as NULL.
SELECT pgmq.send('send_q', NULL) - :first_id AS rel_id;
SELECT msg_id - :first_id AS rel_id, message, headers FROM pgmq.read('send_q', 30, 10);

-- Negative delays are not rejected: the message is visible at once.
SELECT pgmq.send('send_q', '{"negative": true}', -10) - :first_id AS rel_id;
SELECT vt < now() - interval '9 seconds' AS vt_10s_in_past FROM pgmq.q_send_q WHERE message = '{"negative": true}';
SELECT message FROM pgmq.read('send_q', 30, 10);

-- A timestamp in the past: visible at once, vt exactly as given.
SELECT pgmq.send('send_q', '{"past": true}', '2000-01-01 00:00:00+00'::timestamptz) - :first_id AS rel_id;
SELECT vt = '2000-01-01 00:00:00+00'::timestamptz AS vt_as_given FROM pgmq.q_send_q WHERE message = '{"past": true}';
SELECT message FROM pgmq.read('send_q', 30, 10);

-- Headers are stored verbatim, including non-object JSON.
SELECT pgmq.send('send_q', '{"h": "array"}', '["a", 1]'::jsonb) - :first_id AS rel_id;
SELECT headers FROM pgmq.q_send_q WHERE message = '{"h": "array"}';

-- Overload resolution: integer literals pick the int overloads; an untyped
-- NULL third argument is ambiguous, as upstream.
SELECT pgmq.send('send_q', '{"literal": 0}', 0) > 0 AS sent;
SELECT pgmq.send('send_q', '{}', NULL);

-- Sends roll back with their transaction; the id is used up (gap).
BEGIN;
SELECT pgmq.send('send_q', '{"rolled": "back"}') AS rolled_back_id \gset
ROLLBACK;
SELECT count(*) FROM pgmq.q_send_q WHERE message = '{"rolled": "back"}';
SELECT pgmq.send('send_q', '{"after": "rollback"}') - :rolled_back_id AS gap_after_rollback;

SELECT pgmq.purge_queue('send_q') > 0 AS purged;

-------------------------------------------------------------------------------
-- send_batch: one id per element, in array order, one shared vt.
-------------------------------------------------------------------------------
SELECT pgmq.send('send_q', '{"marker": true}') AS base_id \gset

-- send_batch(q, msgs)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 1, "i": 1}', '{"b": 1, "i": 2}', '{"b": 1, "i": 3}']::jsonb[])
       WITH ORDINALITY AS t(msg_id, ord);
-- send_batch(q, msgs, headers)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 2, "i": 1}', '{"b": 2, "i": 2}']::jsonb[],
                       ARRAY['{"h": "2a"}', NULL]::jsonb[]) WITH ORDINALITY AS t(msg_id, ord);
-- send_batch(q, msgs, delay int)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 3, "i": 1}', '{"b": 3, "i": 2}']::jsonb[], 100)
       WITH ORDINALITY AS t(msg_id, ord);
-- send_batch(q, msgs, delay timestamptz)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 4, "i": 1}', '{"b": 4, "i": 2}']::jsonb[],
                       '2099-01-01 00:00:00+00'::timestamptz) WITH ORDINALITY AS t(msg_id, ord);
-- send_batch(q, msgs, headers, delay int)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 5, "i": 1}', '{"b": 5, "i": 2}']::jsonb[],
                       ARRAY['{"h": "5a"}', '{"h": "5b"}']::jsonb[], 200) WITH ORDINALITY AS t(msg_id, ord);
-- send_batch(q, msgs, headers, delay timestamptz)
SELECT ord, msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 6, "i": 1}', '{"b": 6, "i": 2}']::jsonb[],
                       ARRAY['{"h": "6a"}', '{"h": "6b"}']::jsonb[],
                       '2098-06-15 12:00:00+00'::timestamptz) WITH ORDINALITY AS t(msg_id, ord);

SELECT msg_id - :base_id AS rel_id, read_ct, last_read_at, message, headers,
       CASE WHEN vt <= now() THEN 'visible'
            WHEN vt BETWEEN now() + interval '99 seconds' AND now() + interval '101 seconds' THEN 'now + 100s'
            WHEN vt BETWEEN now() + interval '199 seconds' AND now() + interval '201 seconds' THEN 'now + 200s'
            ELSE vt::text END AS vt
  FROM pgmq.q_send_q WHERE msg_id > :base_id ORDER BY msg_id;

-- Each batch shares one vt and one enqueued_at.
SELECT message->>'b' AS batch, count(DISTINCT vt) AS vts, count(DISTINCT enqueued_at) AS enqueued_ats
  FROM pgmq.q_send_q WHERE msg_id > :base_id GROUP BY 1 ORDER BY 1;

-- A NULL headers array gives NULL headers on every row; a NULL element in
-- msgs is a NULL message.
SELECT msg_id - :base_id AS rel_id
  FROM pgmq.send_batch('send_q', ARRAY['{"b": 7}', NULL]::jsonb[], NULL::jsonb[]) AS t(msg_id);
SELECT msg_id - :base_id AS rel_id, message, headers FROM pgmq.q_send_q WHERE msg_id > :base_id + 13 ORDER BY msg_id;

-- A one-element batch.
SELECT msg_id - :base_id AS rel_id FROM pgmq.send_batch('send_q', ARRAY['{"b": 8}']::jsonb[]) AS t(msg_id);

-- A larger batch: consecutive ids in array order, stored in array order.
SELECT count(*), bool_and(msg_id - first_id = ord - 1) AS ids_follow_array_order
  FROM (SELECT msg_id, ord, min(msg_id) OVER () AS first_id
          FROM pgmq.send_batch('send_q', ARRAY(SELECT jsonb_build_object('seq', g) FROM generate_series(1, 500) g))
               WITH ORDINALITY AS t(msg_id, ord)) s;
SELECT count(*), bool_and((message->>'seq')::int = msg_id - first_id + 1) AS stored_in_array_order
  FROM (SELECT msg_id, message, min(msg_id) OVER () AS first_id FROM pgmq.q_send_q WHERE message ? 'seq') s;

-- Validation (1.11.0), before anything is inserted.
SELECT pgmq.send_batch('send_q', NULL::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY[]::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY[]::jsonb[], ARRAY[]::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[], ARRAY['{"h": 1}']::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY['{"a": 1}']::jsonb[], ARRAY['{"h": 1}', '{"h": 2}']::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[], ARRAY[]::jsonb[]);
SELECT pgmq.send_batch('send_q', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[], ARRAY['{"h": 1}']::jsonb[], 10);
SELECT pgmq.send_batch('send_q', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[], ARRAY['{"h": 1}']::jsonb[], now());
SELECT pgmq.send_batch('send_q', NULL::jsonb[], 10);
SELECT pgmq.send_batch('send_q', ARRAY[]::jsonb[], now());
SELECT count(*) FROM pgmq.q_send_q WHERE message ? 'a';

-- A batch is atomic with its transaction.
BEGIN;
SELECT count(*) FROM pgmq.send_batch('send_q', ARRAY['{"rb": 1}', '{"rb": 2}']::jsonb[]);
ROLLBACK;
SELECT count(*) FROM pgmq.q_send_q WHERE message ? 'rb';

-- Sending to a queue that does not exist.
SELECT pgmq.send('send_missing', '{}');
SELECT pgmq.send_batch('send_missing', ARRAY['{}']::jsonb[]);

SELECT pgmq.drop_queue('send_q');
