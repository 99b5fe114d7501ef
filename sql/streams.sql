-- Streams and consumer groups: every group reads every message of one copy,
-- in batches cut by snapshots, with leases, acknowledgements, replay and
-- dead letters (docs/streams.md). Another session's late commit is in the
-- isolation specs stream_*.
SET client_min_messages = warning;

SELECT pgmq.create_stream('orders');
SET client_min_messages = notice;
SELECT pgmq.create_stream('orders');  -- exists: a notice
SELECT pgmq.create('plain');
SELECT pgmq.create_stream('plain');   -- a queue of that name
SELECT pgmq.create_stream('bad', '-1 day');
SELECT pgmq.create_stream('bad', '2 days', '1 day');
SELECT queue_name, is_partitioned FROM pgmq.list_queues() ORDER BY 1;
SELECT partition_name, is_default, from_xid IS NULL AS unbounded FROM pgmq.stream_partitions('orders');

-- Groups from now, from the beginning, from a time.
SELECT pgmq.send('orders', '{"before": "any group"}');
SELECT pgmq.subscribe('orders', 'billing');
SELECT pgmq.subscribe('orders', 'audit', '-infinity');
SELECT pgmq.subscribe('orders', 'later', now() + interval '1 hour');
SELECT pgmq.subscribe('orders', 'nope', max_deliveries => 3);
SELECT pgmq.subscribe('orders', '');
SELECT pgmq.subscribe('plain', 'g');
SELECT pgmq.read_stream('orders', 'nobody', 30, 1);

-- Sends, in the sender's transaction; a rolled-back one is never read.
SELECT pgmq.send('orders', '{"order": 1}');
BEGIN;
SELECT pgmq.send('orders', '{"order": "rolled back"}');
ROLLBACK;
SELECT * FROM pgmq.send_batch('orders', ARRAY['{"order": 2}', '{"order": 3}']::jsonb[],
                               ARRAY['{"k": "a"}', '{"k": "b"}']::jsonb[]);
SELECT pgmq.send('orders', '{"order": 4}', 10);  -- no delay in a stream

-- billing sees what committed after it subscribed, in batches of two.
SELECT msg_id, read_ct, message, headers FROM pgmq.read_stream('orders', 'billing', 30, 2);
SELECT msg_id, read_ct, message FROM pgmq.read_stream('orders', 'billing', 30, 2);
SELECT msg_id FROM pgmq.read_stream('orders', 'billing', 30, 2);
-- audit sees everything, later nothing yet.
SELECT msg_id, message FROM pgmq.read_stream('orders', 'audit', 30, 10);
SELECT msg_id FROM pgmq.read_stream('orders', 'later', 30, 10);

SELECT group_name, pending, in_flight FROM pgmq.stream_groups('orders') ORDER BY 1;
SELECT pgmq.ack('orders', 'billing', 2);
SELECT pgmq.ack('orders', 'billing', 2);         -- already acknowledged
SELECT * FROM pgmq.ack('orders', 'billing', ARRAY[3, 4, 99]);
SELECT pgmq.ack('orders', 'billing', NULL::bigint);
SELECT group_name, pending, in_flight FROM pgmq.stream_groups('orders') ORDER BY 1;

-- A lease that runs out is delivered again to its group only.
SELECT pgmq.send('orders', '{"order": 5}');
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'billing', 0, 5);
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'billing', 0, 5);
SELECT * FROM pgmq.ack('orders', 'billing', ARRAY[6]);
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'billing', 30, 5);

-- An ordered group has one lease out at a time; what is not acknowledged
-- comes again before anything later.
SELECT pgmq.subscribe('orders', 'ledger', '-infinity', ordered => true);
SELECT msg_id FROM pgmq.read_stream('orders', 'ledger', 30, 2);
SELECT msg_id FROM pgmq.read_stream('orders', 'ledger', 30, 2);  -- nothing while the lease runs
SELECT pgmq.ack('orders', 'ledger', 1);
SELECT msg_id FROM pgmq.read_stream('orders', 'ledger', 30, 2);  -- still message 2's lease
SELECT * FROM pgmq.ack('orders', 'ledger', ARRAY[2]);
SELECT msg_id FROM pgmq.read_stream('orders', 'ledger', 30, 2);

-- Replay: from a message id, then forward past it.
SELECT pgmq.seek('orders', 'audit', 4::bigint);
SELECT msg_id FROM pgmq.read_stream('orders', 'audit', 30, 10);
SELECT pgmq.seek('orders', 'audit', 6::bigint);
SELECT msg_id FROM pgmq.read_stream('orders', 'audit', 30, 10);
SELECT pgmq.seek('orders', 'audit', '-infinity'::timestamptz);
SELECT count(*) FROM pgmq.read_stream('orders', 'audit', 30, 10);
SELECT pgmq.seek('orders', 'nobody', 1::bigint);

-- A group subscribed from a time gets the messages sent at or after it
-- (none here: the time is an hour ahead); its reads start at its first
-- snapshot, not from every transaction each time.
SELECT pgmq.subscribe('orders', 'newcomer', now() + interval '1 hour');
SELECT count(*) FROM pgmq.read_stream('orders', 'newcomer', 30, 10);
SELECT pg_snapshot_xmax(window_end) > '1' AS anchored FROM pgmq.consumer_groups WHERE group_name = 'newcomer';
SELECT pgmq.send('orders', '{"order": "after the newcomer"}') IS NOT NULL AS sent;
SELECT message FROM pgmq.read_stream('orders', 'newcomer', 30, 10);
SELECT pgmq.unsubscribe('orders', 'newcomer');

-- Set aside: a copy in the group's dead-letter queue, with why; at
-- max_deliveries a read sets the lease aside itself.
SELECT pgmq.create('orders_dead');
SELECT pgmq.subscribe('orders', 'fragile', '-infinity', dead_letter_queue => 'orders_dead', max_deliveries => 2);
SELECT pgmq.subscribe('orders', 'fragile', '-infinity', dead_letter_queue => 'orders_dead', max_deliveries => 2);
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'fragile', 30, 1);
SELECT pgmq.set_aside('orders', 'fragile', 1, 'cannot parse');
SELECT pgmq.set_aside('orders', 'fragile', 1, 'twice');
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'fragile', 0, 1);
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'fragile', 0, 1);
SELECT msg_id, read_ct FROM pgmq.read_stream('orders', 'fragile', 30, 1);  -- 2 set aside, 4 next
SELECT message, (headers -> 'x-pgmq-dead-letter') - 'moved_at'::text - 'enqueued_at'::text AS dead_letter,
       jsonb_array_length(headers -> 'x-pgmq-failures') AS failures
  FROM pgmq.q_orders_dead ORDER BY msg_id;
SELECT pgmq.set_aside('orders', 'billing', 7, 'no dead-letter queue');
-- A read that finds only a lease at its limit sets it aside too (and keeps
-- that, though it returns nothing).
SELECT pgmq.subscribe('orders', 'once', dead_letter_queue => 'orders_dead', max_deliveries => 1);
SELECT pgmq.send('orders', '{"order": "once"}') AS once_id \gset
SELECT msg_id = :once_id AS got_it FROM pgmq.read_stream('orders', 'once', 0, 10);
SELECT count(*) FROM pgmq.read_stream('orders', 'once', 0, 10);
SELECT pending, in_flight FROM pgmq.stream_groups('orders') WHERE group_name = 'once';
SELECT count(*) FROM pgmq.q_orders_dead WHERE headers -> 'x-pgmq-dead-letter' ->> 'group' = 'once';
-- An empty read takes no transaction id (it only looks, without the lock).
BEGIN;
SELECT count(*) FROM pgmq.read_stream('orders', 'once', 30, 10);
SELECT count(*) FROM pgmq.read_stream_with_poll('orders', 'once', 30, 10, 0, 10);
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;

-- A lease that ran out counts as pending again, not in flight; purging a
-- stream ends its groups' leases.
SELECT pgmq.create_stream('lapsed');
SELECT pgmq.subscribe('lapsed', 'g');
SELECT count(*) FROM pgmq.send_batch('lapsed', ARRAY['{}', '{}', '{}']::jsonb[]);
SELECT count(*) FROM pgmq.read_stream('lapsed', 'g', 0, 10);
SELECT pending, in_flight, oldest_pending_at IS NOT NULL AS has_oldest FROM pgmq.stream_groups('lapsed');
SELECT count(*) FROM pgmq.read_stream('lapsed', 'g', 600, 10);
SELECT pending, in_flight FROM pgmq.stream_groups('lapsed');
SELECT pgmq.purge_queue('lapsed');
SELECT pending, in_flight FROM pgmq.stream_groups('lapsed');
SELECT pgmq.drop_queue('lapsed');

-- The queue functions that would change a message for every group refuse a stream.
SELECT * FROM pgmq.read('orders', 30, 1);
SELECT * FROM pgmq.pop('orders');
SELECT pgmq.delete('orders', 1);
SELECT pgmq.archive('orders', 1);
SELECT * FROM pgmq.set_vt('orders', 1, 30);
SELECT * FROM pgmq.read_multi(ARRAY['plain', 'orders'], 30, 1);
SELECT * FROM pgmq.move('orders', 'plain', ARRAY[1::bigint]);
SELECT msg_id FROM pgmq.peek('orders', 2);   -- looking is fine

-- Storage: partitions are ranges of sending transactions' ids; with no
-- retention, one that every group has passed goes.
SELECT pgmq.create_stream('ticks', '0 seconds');
SELECT pgmq.subscribe('ticks', 'one', '-infinity');
SELECT pgmq.subscribe('ticks', 'two', '-infinity');
SELECT count(*) FROM pgmq.send_batch('ticks', ARRAY['{}', '{}', '{}']::jsonb[]);
SELECT partition_name FROM pgmq.stream_partitions('ticks') WHERE NOT is_default;
CREATE TEMP TABLE burn (n int);
DO $$ BEGIN FOR i IN 1..10000 LOOP BEGIN INSERT INTO burn VALUES (i); EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$;
CALL pgmq.run_partition_maintenance('ticks');  -- makes the next partition
SELECT partition_name FROM pgmq.stream_partitions('ticks') WHERE NOT is_default;
-- Group "one" reads and acknowledges everything, twice over (its window
-- then starts past the partition); "two" has read nothing.
SELECT count(*) FROM pgmq.ack('ticks', 'one', ARRAY(SELECT msg_id FROM pgmq.read_stream('ticks', 'one', 30, 10)));
SELECT pgmq.send('ticks', '{"n": 4}');
SELECT count(*) FROM pgmq.ack('ticks', 'one', ARRAY(SELECT msg_id FROM pgmq.read_stream('ticks', 'one', 30, 10)));
CALL pgmq.run_partition_maintenance('ticks');
SELECT partition_name, bytes > 0 AS has_storage FROM pgmq.stream_partitions('ticks') WHERE NOT is_default;
SELECT group_name, pending, held_bytes > 0 AS holds FROM pgmq.stream_groups('ticks') ORDER BY 1;
SELECT count(*) FROM pgmq.ack('ticks', 'two', ARRAY(SELECT msg_id FROM pgmq.read_stream('ticks', 'two', 30, 10)));
SELECT pgmq.send('ticks', '{"n": 5}');
SELECT count(*) FROM pgmq.ack('ticks', 'two', ARRAY(SELECT msg_id FROM pgmq.read_stream('ticks', 'two', 30, 10)));
CALL pgmq.run_partition_maintenance('ticks');
SELECT partition_name FROM pgmq.stream_partitions('ticks') WHERE NOT is_default;
SELECT msg_id FROM pgmq.peek('ticks', 10);
SELECT pgmq.send('ticks', '{"after": "reclaim"}');
SELECT msg_id, message FROM pgmq.read_stream('ticks', 'one', 30, 10);

-- A session fetches a group's row where it last saw it: wherever the row
-- has gone since (other groups' rows in its place after VACUUM FULL, the
-- group subscribed again), each read finds the group's own state.
SELECT pgmq.create_stream('moves');
SELECT pgmq.subscribe('moves', g) FROM (VALUES ('a'), ('b'), ('c')) AS v (g);
SELECT pgmq.send_batch('moves', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT g, (SELECT array_agg(msg_id) FROM pgmq.read_stream('moves', g, 30, 1)) FROM (VALUES ('a'), ('b'), ('c')) AS v (g);
SELECT pgmq.unsubscribe('moves', 'a');
VACUUM FULL pgmq.consumer_groups;
SELECT g, (SELECT array_agg(msg_id) FROM pgmq.read_stream('moves', g, 30, 1)) FROM (VALUES ('b'), ('c')) AS v (g);
SELECT pgmq.subscribe('moves', 'a', since => '-infinity');
SELECT g, (SELECT array_agg(msg_id) FROM pgmq.read_stream('moves', g, 30, 5)) FROM (VALUES ('a'), ('b'), ('c')) AS v (g);
SELECT g, pgmq.ack('moves', g, 3) FROM (VALUES ('a'), ('b'), ('c')) AS v (g);
-- The same without the session's locations, and after rolled-back writes.
SET pgmq.group_row_hint = off;
SELECT pgmq.seek('moves', 'b', 0::bigint);
SELECT array_agg(msg_id) FROM pgmq.read_stream('moves', 'b', 30, 5);
RESET pgmq.group_row_hint;
BEGIN;
SELECT pgmq.seek('moves', 'c', 0::bigint);
SELECT array_agg(msg_id) FROM pgmq.read_stream('moves', 'c', 30, 5);
ROLLBACK;
SELECT group_name, pending, in_flight FROM pgmq.stream_groups('moves') ORDER BY 1;
SELECT pgmq.ack('moves', 'c', ARRAY[1, 2]::bigint[]);
SELECT pgmq.drop_queue('moves');

-- Release: a consumer gives a message back before its lease runs out; a read
-- delivers it again (read_ct one higher) once the delay has passed, and at
-- max_deliveries sets it aside. An ordered group's whole lease comes back.
SELECT pgmq.create_stream('retries');
SELECT pgmq.create('retries_dead');
SELECT pgmq.subscribe('retries', 'work', dead_letter_queue => 'retries_dead', max_deliveries => 2);
SELECT pgmq.subscribe('retries', 'in_order', ordered => true);
SELECT pgmq.send_batch('retries', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT msg_id, read_ct FROM pgmq.read_stream('retries', 'work', 30, 3);
SELECT pgmq.release('retries', 'work', 2);
SELECT msg_id, read_ct, message FROM pgmq.read_stream('retries', 'work', 30, 3);
SELECT pgmq.release('retries', 'work', 2, 3600);
SELECT count(*) FROM pgmq.read_stream('retries', 'work', 30, 3);
SELECT group_name, pending, in_flight FROM pgmq.stream_groups('retries') WHERE group_name = 'work';
SELECT pgmq.release('retries', 'work', 2);
SELECT count(*) FROM pgmq.read_stream('retries', 'work', 30, 3);
SELECT message, headers->'x-pgmq-dead-letter'->>'reason' AS reason FROM pgmq.read('retries_dead', 30, 5);
SELECT pgmq.release('retries', 'work', 2);
SELECT pgmq.release('retries', 'work', 1, -1);
SELECT pgmq.release('retries', 'work', NULL);
SELECT pgmq.ack('retries', 'work', ARRAY[1, 3]::bigint[]);
SELECT msg_id FROM pgmq.read_stream('retries', 'in_order', 30, 3);
SELECT pgmq.ack('retries', 'in_order', 1);
SELECT pgmq.release('retries', 'in_order', 3);
SELECT msg_id, read_ct FROM pgmq.read_stream('retries', 'in_order', 30, 3);
SELECT pgmq.drop_queue('retries');
SELECT pgmq.drop_queue('retries_dead');

-- Groups go with the stream.
SELECT pgmq.unsubscribe('orders', 'later');
SELECT pgmq.unsubscribe('orders', 'later');
SELECT pgmq.drop_queue('ticks');
SELECT pgmq.drop_queue('orders');
SELECT count(*) FROM pgmq.consumer_groups;
SELECT pgmq.drop_queue('orders_dead');
SELECT pgmq.drop_queue('plain');
