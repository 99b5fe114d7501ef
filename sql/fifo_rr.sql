-- fifo_rr: read_grouped_rr, FIFO groups read round-robin (API.md §2.5).
-- Groups are ordered by their oldest message; a read takes the first message
-- of every open group, then the second of each, and so on (layers), up to
-- qty, and returns them in that order. Within a group the order is msg_id,
-- and a group whose earlier message is in flight is skipped. This file reads
-- through the group index (create_fifo_index); the last part repeats the
-- main cases without it. msg_ids are relative to the first id of each part.
\pset null '<NULL>'
SELECT pgmq.create('fifo_rr');
SELECT pgmq.create_fifo_index('fifo_rr');

-------------------------------------------------------------------------------
-- The example of upstream's documentation: g1 has messages 1 and 2, g2 has
-- message 3; round-robin gives 1, 3, 2.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_rr', '{"n": 1}', '{"x-pgmq-group": "g1"}'::jsonb) AS first \gset
SELECT pgmq.send('fifo_rr', '{"n": 2}', '{"x-pgmq-group": "g1"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_rr', '{"n": 3}', '{"x-pgmq-group": "g2"}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id, message->>'n' AS n, headers->>'x-pgmq-group' AS grp, read_ct,
       vt > clock_timestamp() + interval '29 seconds' AS vt_in_30s, last_read_at IS NOT NULL AS has_last_read_at
  FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- Layers: 5 messages in each of g1, g2, g3, sent interleaved.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       (SELECT array_agg(jsonb_build_object('n', i / 3 + 1) ORDER BY i) FROM generate_series(0, 14) AS i),
       (SELECT array_agg(jsonb_build_object('x-pgmq-group', 'g' || i % 3 + 1) ORDER BY i)
          FROM generate_series(0, 14) AS i)) AS t(id) \gset
SELECT string_agg(headers->>'x-pgmq-group' || ':' || (message->>'n'), ' ') AS first_ten
  FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
UPDATE pgmq.q_fifo_rr SET vt = clock_timestamp() - interval '1 second';
SELECT string_agg(headers->>'x-pgmq-group' || ':' || (message->>'n'), ' ') AS all_fifteen
  FROM pgmq.read_grouped_rr('fifo_rr', 30, 15);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- Unequal groups: g1 has 5 messages, g2 has 2. Once g2 is exhausted the
-- remaining layers hold only g1.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"n": 1}', '{"n": 1}', '{"n": 2}', '{"n": 2}', '{"n": 3}', '{"n": 4}', '{"n": 5}']::jsonb[],
       ARRAY['{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g2"}', '{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g2"}',
             '{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g1"}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message->>'n' AS n FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- Group order is the order of their oldest messages, not of their names;
-- with more open groups than qty, only the oldest groups' heads are read.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"n": 1}', '{"n": 1}', '{"n": 1}', '{"n": 1}', '{"n": 2}']::jsonb[],
       ARRAY['{"x-pgmq-group": "zulu"}', '{"x-pgmq-group": "alpha"}', '{"x-pgmq-group": "mike"}',
             '{"x-pgmq-group": "bravo"}', '{"x-pgmq-group": "zulu"}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 3);
-- zulu, alpha and mike are in flight: only bravo is open.
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 3);
-- Finishing zulu's head opens zulu at its second message.
SELECT pgmq.delete('fifo_rr', :first::bigint);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message->>'n' AS n FROM pgmq.read_grouped_rr('fifo_rr', 30, 3);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped_rr('fifo_rr', 30, 3);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- FIFO within each group while alternating between groups.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"g": "orders", "seq": 1}', '{"g": "payments", "seq": 1}', '{"g": "orders", "seq": 2}',
             '{"g": "payments", "seq": 2}', '{"g": "orders", "seq": 3}', '{"g": "payments", "seq": 3}']::jsonb[],
       ARRAY['{"x-pgmq-group": "orders"}', '{"x-pgmq-group": "payments"}', '{"x-pgmq-group": "orders"}',
             '{"x-pgmq-group": "payments"}', '{"x-pgmq-group": "orders"}', '{"x-pgmq-group": "payments"}']::jsonb[]) AS t(id) \gset
SELECT message->>'g' AS grp, message->>'seq' AS seq FROM pgmq.read_grouped_rr('fifo_rr', 30, 6);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- The default group (no x-pgmq-group) takes part like any other group, and
-- '' is a group of its own.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_rr', '{"m": "no header 1"}') AS first \gset
SELECT pgmq.send('fifo_rr', '{"m": "explicit"}', '{"x-pgmq-group": "explicit"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_rr', '{"m": "no header 2"}') - :first AS id;
SELECT pgmq.send('fifo_rr', '{"m": "empty key"}', '{"x-pgmq-group": ""}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id, message->>'m' AS m FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- In flight and visibility: a group is skipped while its head is in flight,
-- its run ends before an invisible message, and a message whose timeout ran
-- out is read again first.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"n": 1}', '{"n": 1}', '{"n": 2}', '{"n": 2}', '{"n": 3}', '{"n": 3}']::jsonb[],
       ARRAY['{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}', '{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}',
             '{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}']::jsonb[]) AS t(id) \gset
-- Claim a's head only (qty 1), then the rest: b alone is open.
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 1);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
-- a's head times out (set_vt 0), b's second message too: a is read from its
-- head, b is still blocked by its first message.
SELECT count(*) FROM pgmq.set_vt('fifo_rr', ARRAY[:first::bigint, :first + 3], 0);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
-- All visible again, but a's third message delayed: a's run stops before it.
UPDATE pgmq.q_fifo_rr SET vt = clock_timestamp() - interval '1 second';
SELECT count(*) FROM pgmq.set_vt('fifo_rr', :first + 4::bigint, 3600);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped_rr('fifo_rr', 30, 10);
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- Polling, errors, the result type.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"n": 1}', '{"n": 1}', '{"n": 1}', '{"n": 2}', '{"n": 2}']::jsonb[],
       ARRAY['{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g2"}', '{"x-pgmq-group": "g3"}', '{"x-pgmq-group": "g1"}',
             '{"x-pgmq-group": "g2"}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr_with_poll('fifo_rr', 30, 5, 1, 100);
SELECT clock_timestamp() AS poll_start \gset
SELECT count(*) FROM pgmq.read_grouped_rr_with_poll('fifo_rr', 30, 5, 1, 100);
SELECT clock_timestamp() - :'poll_start'::timestamptz >= interval '0.9 seconds' AS waited;
SELECT pg_get_function_arguments('pgmq.read_grouped_rr_with_poll(text, integer, integer, integer, integer)'::regprocedure);
SELECT * FROM pgmq.read_grouped_rr('fifo_rr', 30, -1);
SELECT * FROM pgmq.read_grouped_rr('fifo_rr', NULL, 1);
SELECT * FROM pgmq.read_grouped_rr('fifo_rr_missing', 30, 1);
SELECT * FROM pgmq.read_grouped_rr_with_poll('fifo_rr', 30, 1, 1, -1);
SELECT prorettype::regtype, proretset FROM pg_proc WHERE oid = 'pgmq.read_grouped_rr(text, integer, integer)'::regprocedure;
SELECT pgmq.purge_queue('fifo_rr');

-------------------------------------------------------------------------------
-- Without the group index (the heads are found by reading the queue) the
-- behaviour is the same.
-------------------------------------------------------------------------------
DROP INDEX pgmq.q_fifo_rr_fifo_idx;
SELECT min(id) AS first FROM pgmq.send_batch('fifo_rr',
       ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}', '{"n": 5}', '{"n": 6}']::jsonb[],
       ARRAY['{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g2"}', NULL,
             '{"x-pgmq-group": "g1"}', '{"x-pgmq-group": "g2"}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 4);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 4);
SELECT count(*) AS deleted FROM pgmq.delete('fifo_rr', ARRAY[:first::bigint, :first + 1, :first + 2, :first + 3]);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_rr('fifo_rr', 30, 4);
SELECT pgmq.drop_queue('fifo_rr');
