-- fifo_head: read_grouped_head, at most one message per FIFO group (API.md
-- §2.5): the head (oldest message) of every group whose head is visible,
-- oldest heads first, up to qty. A group whose head is in flight gets
-- nothing. First without the group index, then with it. msg_ids are relative
-- to the first id of each part; rows come back oldest head first.
\pset null '<NULL>'
SELECT pgmq.create('fifo_head');

-------------------------------------------------------------------------------
-- Three groups of three messages, sent interleaved: g1, g2, g3, g1, ...
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_head',
       (SELECT array_agg(jsonb_build_object('n', i / 3 + 1) ORDER BY i) FROM generate_series(0, 8) AS i),
       (SELECT array_agg(jsonb_build_object('x-pgmq-group', 'g' || i % 3 + 1) ORDER BY i)
          FROM generate_series(0, 8) AS i)) AS t(id) \gset
-- One message per group, however large qty is.
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message->>'n' AS n, read_ct,
       vt > clock_timestamp() + interval '29 seconds' AS vt_in_30s, last_read_at IS NOT NULL AS has_last_read_at
  FROM pgmq.read_grouped_head('fifo_head', 30, 10);
-- Every head is in flight: nothing.
SELECT count(*) AS nothing_open FROM pgmq.read_grouped_head('fifo_head', 30, 10);
-- Finishing g2's head makes its second message the head.
SELECT pgmq.delete('fifo_head', :first + 1::bigint);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message->>'n' AS n
  FROM pgmq.read_grouped_head('fifo_head', 30, 10);
-- qty limits the groups, oldest heads first.
UPDATE pgmq.q_fifo_head SET vt = clock_timestamp() - interval '1 second';
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_head('fifo_head', 30, 2);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_head('fifo_head', 30, 2);
-- A head whose timeout ran out is delivered again (read_ct 2).
SELECT count(*) FROM pgmq.set_vt('fifo_head', :first::bigint, 0);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped_head('fifo_head', 30, 10);
SELECT count(*) FROM pgmq.read_grouped_head('fifo_head', 30, 0);
SELECT pgmq.purge_queue('fifo_head');

-------------------------------------------------------------------------------
-- The default group and the '' group; a delayed head blocks its group.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_head', '{"m": "late head"}', '{"x-pgmq-group": "late"}'::jsonb, 3600) AS first \gset
SELECT pgmq.send('fifo_head', '{"m": "after late head"}', '{"x-pgmq-group": "late"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_head', '{"m": "no header 1"}') - :first AS id;
SELECT pgmq.send('fifo_head', '{"m": "empty key"}', '{"x-pgmq-group": ""}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_head', '{"m": "no header 2"}', '{"x-pgmq-group": null}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id, message->>'m' AS m FROM pgmq.read_grouped_head('fifo_head', 30, 10);
SELECT pgmq.purge_queue('fifo_head');

-------------------------------------------------------------------------------
-- Polling, errors, the result type.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_head', '{"p": 1}', '{"x-pgmq-group": "poll"}'::jsonb) AS first \gset
SELECT pgmq.send('fifo_head', '{"p": 2}', '{"x-pgmq-group": "poll"}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id FROM pgmq.read_grouped_head_with_poll('fifo_head', 30, 10, 1, 100);
SELECT clock_timestamp() AS poll_start \gset
SELECT count(*) FROM pgmq.read_grouped_head_with_poll('fifo_head', 30, 10, 1, 100);
SELECT clock_timestamp() - :'poll_start'::timestamptz >= interval '0.9 seconds' AS waited;
-- max_poll_seconds 0: one attempt, no wait.
SELECT count(*) FROM pgmq.read_grouped_head_with_poll('fifo_head', 30, 10, 0, 100);
SELECT pg_get_function_arguments('pgmq.read_grouped_head_with_poll(text, integer, integer, integer, integer)'::regprocedure);
SELECT * FROM pgmq.read_grouped_head('fifo_head', 30, -5);
SELECT * FROM pgmq.read_grouped_head(NULL, 30, 1);
SELECT * FROM pgmq.read_grouped_head('fifo_head_missing', 30, 1);
SELECT prorettype::regtype, proretset FROM pg_proc WHERE oid = 'pgmq.read_grouped_head(text, integer, integer)'::regprocedure;
SELECT pgmq.purge_queue('fifo_head');

-------------------------------------------------------------------------------
-- Through the group index: the same.
-------------------------------------------------------------------------------
SELECT pgmq._create_fifo_index_if_not_exists('fifo_head');
SELECT indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename = 'q_fifo_head' ORDER BY 1;
SELECT min(id) AS first FROM pgmq.send_batch('fifo_head',
       ARRAY['{"n": 1}', '{"n": 1}', '{"n": 2}', '{"n": 1}', '{"n": 2}', '{"n": 1}']::jsonb[],
       ARRAY['{"x-pgmq-group": "b"}', '{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}', NULL,
             '{"x-pgmq-group": "a"}', '{"x-pgmq-group": ""}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_head('fifo_head', 30, 3);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped_head('fifo_head', 30, 3);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped_head('fifo_head', 30, 3);
SELECT count(*) AS archived FROM pgmq.archive('fifo_head', ARRAY[:first::bigint, :first + 1]);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message->>'n' AS n FROM pgmq.read_grouped_head('fifo_head', 30, 3);
SELECT pgmq.drop_queue('fifo_head');
