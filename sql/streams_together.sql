-- Streams with each feature they can meet (docs/architecture.md, "Features
-- together"). The relay's and the console's pairs are in their own tests.
SET client_min_messages = warning;
SELECT pgmq.create_stream('st_events');
SELECT pgmq.subscribe('st_events', 'a', '-infinity');
SELECT pgmq.subscribe('st_events', 'b', '-infinity');
SET client_min_messages = notice;

-- Policies that belong to a queue's own reads refuse a stream: its order,
-- retention and dead letters are per group.
SELECT pgmq.create('st_dlq');
SELECT pgmq.set_dead_letter_queue('st_events', 'st_dlq', 3);
SELECT pgmq.set_retry_backoff('st_events', 1, 10);
SELECT pgmq.set_retention('st_events', '1 day');
SELECT pgmq.set_priority('st_events', 3);
SELECT * FROM pgmq.read_grouped('st_events', 30, 1);

-- Deduplication: a resent id adds nothing, for every group.
SELECT pgmq.set_deduplication('st_events', '1 hour');
SELECT pgmq.send('st_events', '{"n": 1}', '{"x-pgmq-deduplication-id": "one"}'::jsonb);
SELECT pgmq.send('st_events', '{"n": 1}', '{"x-pgmq-deduplication-id": "one"}'::jsonb);
SELECT msg_id, message FROM pgmq.read_stream('st_events', 'a', 30, 10);
SELECT msg_id, message FROM pgmq.read_stream('st_events', 'b', 30, 10);
SELECT * FROM pgmq.ack('st_events', 'a', ARRAY[1]);
SELECT * FROM pgmq.ack('st_events', 'b', ARRAY[1]);

-- Pause: no group reads; sends go on; resume.
SELECT pgmq.pause('st_events');
SELECT pgmq.send('st_events', '{"n": 2}');
SELECT msg_id FROM pgmq.read_stream('st_events', 'a', 30, 10);
SELECT msg_id FROM pgmq.read_stream_with_poll('st_events', 'a', 30, 10, 1, 50);
SELECT pgmq.resume('st_events');
SELECT msg_id FROM pgmq.read_stream('st_events', 'a', 30, 10);
SELECT * FROM pgmq.ack('st_events', 'a', ARRAY[3]);

-- Priorities: a priority header is a header in a stream (commit order rules).
SELECT pgmq.send('st_events', '{"n": 3}', '{"x-pgmq-priority": 2}'::jsonb);
SELECT msg_id, headers FROM pgmq.read_stream('st_events', 'a', 30, 10);
SELECT * FROM pgmq.ack('st_events', 'a', ARRAY[4]);

-- Move into a stream (every group gets it); out of one is refused.
SELECT pgmq.create('st_plain');
SELECT pgmq.send('st_plain', '{"n": "moved"}');
SELECT * FROM pgmq.move('st_plain', 'st_events', ARRAY[1::bigint]);
SELECT msg_id, message, headers ? 'x-pgmq-moved-from' AS moved FROM pgmq.read_stream('st_events', 'a', 30, 10);
SELECT * FROM pgmq.move('st_events', 'st_plain', ARRAY[5::bigint]);

-- Topics: a binding routes sends into the stream as into a queue.
SELECT pgmq.bind_topic('orders.*', 'st_events');
SELECT pgmq.send_topic('orders.placed', '{"n": "routed"}');
SELECT msg_id, message FROM pgmq.read_stream('st_events', 'a', 30, 10);

-- Insert notifications fire for a stream's inserts (into any partition).
-- (A listener's delivery is notify_listen.py's; here the throttle's clock.)
SELECT pgmq.enable_notify_insert('st_events', 60000);
SELECT pgmq.send('st_events', '{"n": "notified"}');
SELECT last_notified_at > now() - interval '1 minute' AS notified
  FROM pgmq.notify_insert_throttle WHERE queue_name = 'st_events';
SELECT pgmq.disable_notify_insert('st_events');

-- Dead letters and retry: a group's dead-letter queue is a queue, with its
-- own retry backoff and its own dead-letter queue.
SELECT pgmq.create('st_dlq_final');
SELECT pgmq.set_retry_backoff('st_dlq', 0, 0);
SELECT pgmq.set_dead_letter_queue('st_dlq', 'st_dlq_final', 2);
SELECT pgmq.subscribe('st_events', 'c', '-infinity', dead_letter_queue => 'st_dlq');
SELECT count(*) FROM pgmq.read_stream('st_events', 'c', 30, 100);
SELECT pgmq.set_aside('st_events', 'c', 1, 'bad');
SELECT msg_id, read_ct FROM pgmq.read('st_dlq', 30, 1);
SELECT msg_id, read_ct, headers -> 'x-pgmq-failures' -> -1 ->> 'reason' AS last_failure
  FROM pgmq.retry('st_dlq', 1, 'still bad');
SELECT msg_id, read_ct FROM pgmq.read('st_dlq', 30, 1);
SELECT count(*) FROM pgmq.retry('st_dlq', 1, 'bad again');
SELECT count(*) FROM pgmq.read('st_dlq', 30, 1);  -- at the delivery limit: moved on
SELECT message, headers -> 'x-pgmq-dead-letter' ->> 'queue' AS from_queue,
       headers -> 'x-pgmq-dead-letter' -> 'headers' IS NULL AS same_headers
  FROM pgmq.q_st_dlq_final;
-- A stream as a queue's dead-letter queue: every group sees the dead letters.
SELECT pgmq.create('st_work');
SELECT pgmq.set_dead_letter_queue('st_work', 'st_events', 1);
SELECT pgmq.send('st_work', '{"n": "dead"}');
SELECT count(*) FROM pgmq.read('st_work', 0, 1);
SELECT count(*) FROM pgmq.read('st_work', 0, 1);
SELECT message FROM pgmq.read_stream('st_events', 'b', 30, 100) WHERE message ? 'n' AND message->>'n' = 'dead';

-- Grants: a role given access to the stream reads, acknowledges and seeks as
-- a group; only the owner subscribes.
CREATE ROLE regress_st_reader;
CREATE ROLE regress_st_outsider;
GRANT USAGE ON SCHEMA pgmq TO regress_st_outsider;
SELECT pgmq.grant_queue_access('st_events', 'regress_st_reader');
SET ROLE regress_st_reader;
SELECT count(*) FROM pgmq.read_stream('st_events', 'c', 30, 100);  -- group c's dead-letter queue needs INSERT
SELECT count(*) FROM pgmq.read_stream('st_plain', 'c', 30, 100);
RESET ROLE;
SELECT pgmq.grant_queue_access('st_dlq', 'regress_st_reader');
SET ROLE regress_st_reader;
SELECT count(*) > 0 AS got FROM pgmq.read_stream('st_events', 'c', 30, 100);
SELECT count(*) > 0 AS acked FROM pgmq.ack('st_events', 'c', ARRAY(SELECT generate_series(1, 20)::bigint));
SELECT pgmq.seek('st_events', 'c', 1::bigint);
SELECT pgmq.subscribe('st_events', 'mine');
SELECT pgmq.unsubscribe('st_events', 'a');
-- A reader moves a group's cursor and leases; its name, stream and options
-- change only through subscribe, by the stream's owner.
UPDATE pgmq.consumer_groups SET dead_letter_queue = 'st_plain' WHERE group_name = 'c';
UPDATE pgmq.consumer_groups SET group_name = 'c2' WHERE group_name = 'c';
UPDATE pgmq.consumer_groups SET ordered = true, max_deliveries = 1 WHERE group_name = 'c';
SET ROLE regress_st_outsider;
SELECT count(*) FROM pgmq.read_stream('st_events', 'a', 30, 100);
SELECT pgmq.seek('st_events', 'a', 1::bigint);
RESET ROLE;
SELECT count(*) FROM pgmq.stream_groups('st_events');
-- A group with a reader: only that role (or one with its privileges, or the
-- stream's owner) reads, acknowledges and moves it; the stream's other
-- readers are refused, by the functions and by row security.
CREATE ROLE regress_st_billing;
SELECT pgmq.grant_queue_access('st_events', 'regress_st_billing');
SELECT pgmq.subscribe('st_events', 'billing', reader => 'regress_st_billing');
SELECT pgmq.send('st_events', '{"for": "billing"}') AS billing_id \gset
SET ROLE regress_st_reader;
SELECT count(*) FROM pgmq.read_stream('st_events', 'billing', 30, 10);
SELECT pgmq.ack('st_events', 'billing', :billing_id);
SELECT pgmq.seek('st_events', 'billing', 1::bigint);
WITH cleared AS (UPDATE pgmq.consumer_groups SET leases = '[]' WHERE group_name = 'billing' RETURNING 1)
SELECT count(*) AS cleared FROM cleared;
SET ROLE regress_st_billing;
SELECT message FROM pgmq.read_stream('st_events', 'billing', 30, 10);
SELECT pgmq.ack('st_events', 'billing', :billing_id);
UPDATE pgmq.consumer_groups SET reader_role = NULL WHERE group_name = 'billing';  -- would open it to every reader
RESET ROLE;
SELECT group_name, reader_role FROM pgmq.consumer_groups WHERE group_name = 'billing';
SELECT pgmq.subscribe('st_events', 'billing');  -- without a reader: any reader of the stream again
SET ROLE regress_st_reader;
SELECT count(*) FROM pgmq.read_stream('st_events', 'billing', 30, 10);
RESET ROLE;
-- The partitions' figures come through the stream's table: a reader given
-- access sees them (its grant is on the stream's table only).
SET ROLE regress_st_reader;
SELECT count(*) > 1 AS partitions, bool_or(newest_at IS NOT NULL) AS newest FROM pgmq.stream_partitions('st_events');
RESET ROLE;
-- A tenant's stream whose table runs its own code does not fail every
-- stream's figures: its groups are listed without them, with a warning.
CREATE ROLE regress_st_tenant;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_st_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.meta TO regress_st_tenant;
SET ROLE regress_st_tenant;
SELECT pgmq.create_stream('st_tenant');
SELECT pgmq.subscribe('st_tenant', 'mine');
-- An owner that is not a superuser changes a group's options with subscribe
-- (its position is kept), not with an UPDATE.
SELECT pgmq.send('st_tenant', '{"n": 1}') AS tenant_first \gset
SELECT msg_id = :tenant_first AS first FROM pgmq.read_stream('st_tenant', 'mine', 30, 1);
SELECT pgmq.ack('st_tenant', 'mine', :tenant_first);
SELECT pgmq.subscribe('st_tenant', 'mine', ordered => true);
SELECT ordered FROM pgmq.stream_groups('st_tenant');
SELECT pgmq.send('st_tenant', '{"n": 2}') AS tenant_second \gset
SELECT msg_id = :tenant_second AS next FROM pgmq.read_stream('st_tenant', 'mine', 30, 10);
UPDATE pgmq.consumer_groups SET ordered = false WHERE group_name = 'mine';
SELECT pgmq.subscribe('st_tenant', 'mine', dead_letter_queue => 'st_dlq');  -- one it may not send to
CREATE FUNCTION pgmq.st_trap() RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE INDEX ON pgmq.q_st_tenant (msg_id) WHERE pgmq.st_trap();
RESET ROLE;
SELECT stream_name, group_name, pending IS NULL AS no_figures FROM pgmq.stream_groups() ORDER BY 1, 2;
SET ROLE regress_st_tenant;
SELECT pgmq.drop_queue('st_tenant');
DROP FUNCTION pgmq.st_trap();
RESET ROLE;

SET client_min_messages = warning;
SELECT pgmq.drop_queue(q) FROM unnest(ARRAY['st_events', 'st_dlq', 'st_dlq_final', 'st_plain', 'st_work']) AS q;
DROP OWNED BY regress_st_reader, regress_st_outsider, regress_st_tenant, regress_st_billing;
DROP ROLE regress_st_reader, regress_st_outsider, regress_st_tenant, regress_st_billing;
