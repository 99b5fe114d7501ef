-- fifo: read_grouped, SQS-style FIFO groups (API.md §2.5). Messages with the
-- same x-pgmq-group header form a group; a batch fills from the oldest open
-- group first, and a group is never read while an earlier message of it is
-- in flight. First without the group index (heads found by reading the
-- queue), then with it, then at scale: 100,000 messages in 1,000 groups read
-- through the index without scanning the table. msg_ids are relative to the
-- first id of each part. Rows come back in delivery order (group by group,
-- oldest group first), so results are shown unsorted.
\pset null '<NULL>'
SELECT pgmq.create('fifo_q');

-------------------------------------------------------------------------------
-- Batch filling: A has 3 messages, B 2, C 1 (sent A, A, A, B, B, C).
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_q',
       ARRAY['{"a": 1}', '{"a": 2}', '{"a": 3}', '{"b": 1}', '{"b": 2}', '{"c": 1}']::jsonb[],
       ARRAY['{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}',
             '{"x-pgmq-group": "B"}', '{"x-pgmq-group": "B"}', '{"x-pgmq-group": "C"}']::jsonb[]) AS t(id) \gset
-- qty 4: all of A, then the first of B.
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, message, read_ct,
       vt > clock_timestamp() + interval '29 seconds' AS vt_in_30s, last_read_at IS NOT NULL AS has_last_read_at
  FROM pgmq.read_grouped('fifo_q', 30, 4);
-- A and B are in flight now: B's second message waits for its first. Only C.
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped('fifo_q', 30, 10);
-- Finishing B's first message (delete) opens B again at its second.
SELECT pgmq.delete('fifo_q', :first + 3::bigint);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped('fifo_q', 30, 10);
-- A message whose visibility timeout ran out is read again, and only then
-- the rest of its group: make A's head visible (set_vt 0), A's later
-- messages stay in flight, so only the head comes back.
SELECT count(*) FROM pgmq.set_vt('fifo_q', :first::bigint, 0);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped('fifo_q', 30, 10);
-- When the whole group's timeouts have run out it is read again, in order.
UPDATE pgmq.q_fifo_q SET vt = clock_timestamp() - interval '1 second';
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT pgmq.purge_queue('fifo_q');

-------------------------------------------------------------------------------
-- Batch sizes: 5 messages in A, 3 in B.
-------------------------------------------------------------------------------
SELECT min(id) AS first FROM pgmq.send_batch('fifo_q',
       ARRAY['{"s": 1}', '{"s": 2}', '{"s": 3}', '{"s": 4}', '{"s": 5}', '{"s": 1}', '{"s": 2}', '{"s": 3}']::jsonb[],
       ARRAY['{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}',
             '{"x-pgmq-group": "A"}', '{"x-pgmq-group": "B"}', '{"x-pgmq-group": "B"}',
             '{"x-pgmq-group": "B"}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 3);
UPDATE pgmq.q_fifo_q SET vt = clock_timestamp() - interval '1 second';
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 7);
UPDATE pgmq.q_fifo_q SET vt = clock_timestamp() - interval '1 second';
-- qty 0 claims nothing; qty larger than the queue claims everything.
SELECT count(*) FROM pgmq.read_grouped('fifo_q', 30, 0);
SELECT count(*) FROM pgmq.read_grouped('fifo_q', 30, 100);
SELECT pgmq.purge_queue('fifo_q');

-------------------------------------------------------------------------------
-- The group key: coalesce(headers->>'x-pgmq-group', '_default_fifo_group').
-- NULL headers, a JSON null key and headers without the key all fall into
-- the default group; the empty string '' is a group of its own.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_q', '{"m": "no header"}') AS first \gset
SELECT pgmq.send('fifo_q', '{"m": "empty key"}', '{"x-pgmq-group": ""}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_q', '{"m": "json null"}', '{"x-pgmq-group": null}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_q', '{"m": "other header"}', '{"trace": "t1"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_q', '{"m": "empty key 2"}', '{"x-pgmq-group": ""}'::jsonb) - :first AS id;
-- One read: the default group (oldest head) first, then the '' group.
SELECT msg_id - :first AS id, message->>'m' AS m FROM pgmq.read_grouped('fifo_q', 30, 10);
UPDATE pgmq.q_fifo_q SET vt = clock_timestamp() - interval '1 second';
-- With the default group's head in flight, the '' group is still open.
SELECT msg_id - :first AS id, message->>'m' AS m FROM pgmq.read_grouped('fifo_q', 30, 1);
SELECT msg_id - :first AS id, message->>'m' AS m FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT pgmq.purge_queue('fifo_q');

-------------------------------------------------------------------------------
-- An invisible earlier message blocks its group, whatever made it invisible:
-- a delayed head blocks the whole group; a delayed message in the middle
-- ends the run before it.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_q', '{"n": 1}', '{"x-pgmq-group": "late"}'::jsonb, 3600) AS first \gset
SELECT pgmq.send('fifo_q', '{"n": 2}', '{"x-pgmq-group": "late"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_q', '{"n": 1}', '{"x-pgmq-group": "gap"}'::jsonb) - :first AS id;
SELECT pgmq.send('fifo_q', '{"n": 2}', '{"x-pgmq-group": "gap"}'::jsonb, 3600) - :first AS id;
SELECT pgmq.send('fifo_q', '{"n": 3}', '{"x-pgmq-group": "gap"}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT pgmq.purge_queue('fifo_q');

-------------------------------------------------------------------------------
-- Polling: returns at once when something is open; otherwise waits up to
-- max_poll_seconds and returns nothing.
-------------------------------------------------------------------------------
SELECT pgmq.send('fifo_q', '{"p": 1}', '{"x-pgmq-group": "poll"}'::jsonb) AS first \gset
SELECT pgmq.send('fifo_q', '{"p": 2}', '{"x-pgmq-group": "poll"}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id FROM pgmq.read_grouped_with_poll('fifo_q', 30, 10, 1, 100);
SELECT clock_timestamp() AS poll_start \gset
SELECT count(*) FROM pgmq.read_grouped_with_poll('fifo_q', 30, 10, 1, 100);
SELECT clock_timestamp() - :'poll_start'::timestamptz >= interval '0.9 seconds' AS waited;
-- The defaults are max_poll_seconds 5 and poll_interval_ms 100.
SELECT pg_get_function_arguments('pgmq.read_grouped_with_poll(text, integer, integer, integer, integer)'::regprocedure);
SELECT pgmq.purge_queue('fifo_q');

-------------------------------------------------------------------------------
-- Errors and the result type.
-------------------------------------------------------------------------------
SELECT * FROM pgmq.read_grouped('fifo_q', 30, NULL);
SELECT * FROM pgmq.read_grouped('fifo_q', 30, -1);
SELECT * FROM pgmq.read_grouped('fifo_missing', 30, 1);
SELECT * FROM pgmq.read_grouped('bad;name', 30, 1);
SELECT * FROM pgmq.read_grouped('fifo_q', 30, 1);
SELECT prorettype::regtype, proretset FROM pg_proc WHERE oid = 'pgmq.read_grouped(text, integer, integer)'::regprocedure;

-------------------------------------------------------------------------------
-- create_fifo_index: upstream's index name q_<queue>_fifo_idx, here a btree
-- on (group key, msg_id); idempotent. The same behaviour follows through it.
-------------------------------------------------------------------------------
SELECT pgmq.create_fifo_index('fifo_q');
SELECT pgmq.create_fifo_index('fifo_q');
SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'pgmq' AND indexname = 'q_fifo_q_fifo_idx';
SELECT pgmq.create_fifo_index('fifo_missing');
SELECT min(id) AS first FROM pgmq.send_batch('fifo_q',
       ARRAY['{"a": 1}', '{"a": 2}', '{"a": 3}', '{"b": 1}', '{"b": 2}', '{"c": 1}', '{"d": 1}', '{"e": 1}']::jsonb[],
       ARRAY['{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}', '{"x-pgmq-group": "A"}',
             '{"x-pgmq-group": "B"}', '{"x-pgmq-group": "B"}', '{"x-pgmq-group": "C"}', NULL,
             '{"x-pgmq-group": ""}']::jsonb[]) AS t(id) \gset
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 4);
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT count(*) AS nothing_open FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT count(*) AS deleted_a FROM pgmq.delete('fifo_q', ARRAY[:first::bigint, :first + 1, :first + 2]);
UPDATE pgmq.q_fifo_q SET vt = clock_timestamp() - interval '1 second' WHERE msg_id = :first + 5;
SELECT msg_id - :first AS id, headers->>'x-pgmq-group' AS grp, read_ct FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT pgmq.purge_queue('fifo_q');
-- The gap rule through the index too.
SELECT pgmq.send('fifo_q', '{"n": 1}', '{"x-pgmq-group": "gap"}'::jsonb) AS first \gset
SELECT pgmq.send('fifo_q', '{"n": 2}', '{"x-pgmq-group": "gap"}'::jsonb, 3600) - :first AS id;
SELECT pgmq.send('fifo_q', '{"n": 3}', '{"x-pgmq-group": "gap"}'::jsonb) - :first AS id;
SELECT msg_id - :first AS id FROM pgmq.read_grouped('fifo_q', 30, 10);
SELECT pgmq.drop_queue('fifo_q');

-------------------------------------------------------------------------------
-- create_fifo_indexes_all: one index per queue in meta.
-------------------------------------------------------------------------------
SELECT pgmq.create('fifo_all_1');
SELECT pgmq.create('Fifo_All_2');
SELECT pgmq.create_fifo_indexes_all();
SELECT indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND indexname LIKE 'q_fifo_all_%_fifo_idx' ORDER BY 1;
SELECT pgmq.drop_queue('fifo_all_1');
SELECT pgmq.drop_queue('Fifo_All_2');

-------------------------------------------------------------------------------
-- Scale: 100,000 messages in 1,000 groups. Through the group index a read
-- probes the index once per group (about 1,000 index entries) and never
-- scans the table; without it, each read scans the whole queue. The plan is
-- shown in docs/fifo.md.
-------------------------------------------------------------------------------
SELECT pgmq.create('fifo_big');
INSERT INTO pgmq.q_fifo_big (vt, message, headers)
SELECT clock_timestamp() - interval '1 minute', jsonb_build_object('i', i), jsonb_build_object('x-pgmq-group', 'g' || i % 1000)
  FROM generate_series(0, 99999) AS i;
ANALYZE pgmq.q_fifo_big;
SELECT pgmq.create_fifo_index('fifo_big');
-- Statistics are flushed at the end of each transaction when forced.
SELECT pg_stat_force_next_flush();
SELECT t.seq_scan AS seq_before, i.idx_tup_read AS idx_read_before
  FROM pg_stat_user_tables t, pg_stat_user_indexes i
 WHERE t.relid = 'pgmq.q_fifo_big'::regclass AND i.indexrelid = 'pgmq.q_fifo_big_fifo_idx'::regclass \gset
-- The 10 oldest messages of the oldest group (g0: ids 0, 1000, 2000, ...).
SELECT array_agg((message->>'i')::int) AS claimed FROM pgmq.read_grouped('fifo_big', 30, 10);
SELECT pg_stat_force_next_flush();
SELECT t.seq_scan - :seq_before AS table_scans,
       i.idx_tup_read - :idx_read_before BETWEEN 1000 AND 1100 AS about_one_index_entry_per_group
  FROM pg_stat_user_tables t, pg_stat_user_indexes i
 WHERE t.relid = 'pgmq.q_fifo_big'::regclass AND i.indexrelid = 'pgmq.q_fifo_big_fifo_idx'::regclass;
-- g0 is in flight: the next read starts at g1.
SELECT array_agg((message->>'i')::int) AS claimed FROM pgmq.read_grouped('fifo_big', 30, 3);
-- Without the index the same read scans the table.
DROP INDEX pgmq.q_fifo_big_fifo_idx;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS seq_before FROM pg_stat_user_tables WHERE relid = 'pgmq.q_fifo_big'::regclass \gset
SELECT array_agg((message->>'i')::int) AS claimed FROM pgmq.read_grouped('fifo_big', 30, 3);
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :seq_before >= 1 AS scanned_the_table FROM pg_stat_user_tables WHERE relid = 'pgmq.q_fifo_big'::regclass;
SELECT pgmq.drop_queue('fifo_big');
