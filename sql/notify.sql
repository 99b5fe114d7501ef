-- notify: insert notifications (API.md §2.13). enable_notify_insert installs
-- a trigger that NOTIFYs "pgmq.q_<queue name>.INSERT" at most once per
-- throttle interval, tracked in pgmq.notify_insert_throttle. Delivery to a
-- listener is tested by test/integration/notify_listen.py (psql prints the
-- sender's PID with every notification); here the throttle row shows when an
-- insert notified: last_notified_at moves only then.
\pset null '<NULL>'
SELECT pgmq.create('notify_q');
SELECT pgmq.create('Notify_Mixed');

-------------------------------------------------------------------------------
-- The objects: an UNLOGGED throttle table, its keys, dumped by pg_dump.
-------------------------------------------------------------------------------
SELECT relname, relpersistence FROM pg_class
 WHERE oid IN ('pgmq.notify_insert_throttle'::regclass, 'pgmq.idx_notify_throttle_active'::regclass) ORDER BY 1;
-- (NOT NULL constraints, listed here from PostgreSQL 18, are left out.)
SELECT conname, contype, confdeltype FROM pg_constraint
 WHERE conrelid = 'pgmq.notify_insert_throttle'::regclass AND contype <> 'n' ORDER BY 1;
SELECT pg_get_indexdef('pgmq.idx_notify_throttle_active'::regclass);
SELECT 'pgmq.notify_insert_throttle'::regclass = ANY (extconfig) AS dumped FROM pg_extension WHERE extname = 'pgmq';

-------------------------------------------------------------------------------
-- enable_notify_insert: default interval 250 ms, quietly (no NOTICE about
-- a trigger to replace); the row starts at the epoch.
-------------------------------------------------------------------------------
SELECT pgmq.enable_notify_insert('notify_q');
SELECT * FROM pgmq.list_notify_insert_throttles();
SELECT tgname, tgdeferrable, tginitdeferred, pg_get_triggerdef(oid) FROM pg_trigger
 WHERE tgrelid = 'pgmq.q_notify_q'::regclass;
-- With an interval of an hour (so that no test timing matters): the first
-- insert notifies (the epoch is long past) ...
SELECT pgmq.update_notify_insert('notify_q', 3600000);
SELECT pgmq.send('notify_q', '{"n": 1}') > 0 AS sent;
SELECT last_notified_at AS stamp FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q' \gset
SELECT :'stamp'::timestamptz > 'epoch' AS notified;
-- ... the next ones within the interval do not.
SELECT pgmq.send('notify_q', '{"n": 2}') > 0 AS sent;
SELECT count(*) > 0 AS sent FROM pgmq.send_batch('notify_q', ARRAY['{"n": 3}', '{"n": 4}']::jsonb[]);
SELECT last_notified_at = :'stamp' AS throttled FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';
-- Once the interval has passed (the last notification moved two hours
-- back), the next insert notifies again.
UPDATE pgmq.notify_insert_throttle SET last_notified_at = last_notified_at - interval '2 hours'
 WHERE queue_name = 'notify_q' RETURNING last_notified_at AS stamp \gset
SELECT pgmq.send('notify_q', '{"n": 5}') > 0 AS sent;
SELECT last_notified_at > :'stamp' AS notified_again FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';
-- A rolled-back insert leaves the throttle as it was (and NOTIFYs nothing).
UPDATE pgmq.notify_insert_throttle SET last_notified_at = last_notified_at - interval '2 hours'
 WHERE queue_name = 'notify_q' RETURNING last_notified_at AS stamp \gset
BEGIN;
SELECT pgmq.send('notify_q', '{"n": 6}') > 0 AS sent;
SELECT last_notified_at > :'stamp' AS notified_in_transaction FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';
ROLLBACK;
SELECT last_notified_at = :'stamp' AS unchanged FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';

-------------------------------------------------------------------------------
-- update_notify_insert: a new interval, and last_notified_at back to the
-- epoch. Interval 0 notifies every inserting transaction.
-------------------------------------------------------------------------------
SELECT pgmq.update_notify_insert('notify_q', 0);
SELECT * FROM pgmq.list_notify_insert_throttles();
SELECT pgmq.send('notify_q', '{"n": 7}') > 0 AS sent;
SELECT last_notified_at AS stamp FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q' \gset
SELECT pgmq.send('notify_q', '{"n": 8}') > 0 AS sent;
SELECT last_notified_at > :'stamp' AS notified_again FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';
-- A batch in one transaction stamps the row once, not once per message
-- (upstream updates it for every row; the NOTIFYs collapse at commit).
SELECT pg_stat_force_next_flush();
SELECT n_tup_upd AS updates_before FROM pg_stat_user_tables WHERE relid = 'pgmq.notify_insert_throttle'::regclass \gset
SELECT count(*) FROM pgmq.send_batch('notify_q', (SELECT array_agg(jsonb_build_object('i', i)) FROM generate_series(1, 100) AS i));
SELECT pg_stat_force_next_flush();
SELECT n_tup_upd - :updates_before AS throttle_row_updates FROM pg_stat_user_tables
 WHERE relid = 'pgmq.notify_insert_throttle'::regclass;

-------------------------------------------------------------------------------
-- A mixed-case queue: the trigger gets the name as created (1.13.1), so its
-- throttle row is found and its channel is "pgmq.q_Notify_Mixed.INSERT".
-------------------------------------------------------------------------------
SELECT pgmq.enable_notify_insert('Notify_Mixed', 0);
SELECT encode(tgargs, 'escape') AS tgargs FROM pg_trigger WHERE tgrelid = 'pgmq.q_notify_mixed'::regclass;
SELECT pgmq.send('Notify_Mixed', '{"n": 1}') > 0 AS sent;
SELECT queue_name, throttle_interval_ms, last_notified_at > 'epoch' AS notified FROM pgmq.list_notify_insert_throttles();

-------------------------------------------------------------------------------
-- A trigger made by pgmq before 1.13.1 has no argument: the queue name is the
-- table name without "q_" (right for lowercase names).
-------------------------------------------------------------------------------
SELECT pgmq.update_notify_insert('notify_q', 0);
DROP TRIGGER trigger_notify_queue_insert_listeners ON pgmq.q_notify_q;
CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.q_notify_q
    DEFERRABLE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners();
SELECT pgmq.send('notify_q', '{"n": 9}') > 0 AS sent;
SELECT last_notified_at > 'epoch' AS notified FROM pgmq.notify_insert_throttle WHERE queue_name = 'notify_q';
-- Not a trigger call: an error, not a crash.
SELECT pgmq.notify_queue_listeners();

-------------------------------------------------------------------------------
-- Errors, in upstream's order.
-------------------------------------------------------------------------------
SELECT pgmq.enable_notify_insert('notify_q', -1);
SELECT pgmq.enable_notify_insert('notify_missing', 100);
SELECT pgmq.enable_notify_insert('notify_missing', -1);
SELECT pgmq.enable_notify_insert('bad$name', 100);
SELECT pgmq.enable_notify_insert('notify_q', NULL);
SELECT pgmq.update_notify_insert('notify_missing', -5);
SELECT pgmq.update_notify_insert('notify_missing', 5);
SELECT pgmq.create('notify_off');
SELECT pgmq.update_notify_insert('notify_off', 5);
SELECT pgmq.update_notify_insert('notify_q', NULL);
SELECT pgmq.update_notify_insert(NULL, 5);
-- update_notify_insert checks meta with the exact spelling.
SELECT pgmq.update_notify_insert('notify_mixed', 5);

-------------------------------------------------------------------------------
-- disable_notify_insert: drops the trigger and the row; calling it again, or
-- for a missing queue, only gives PostgreSQL's NOTICE.
-------------------------------------------------------------------------------
SELECT pgmq.disable_notify_insert('notify_q');
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'pgmq.q_notify_q'::regclass;
SELECT queue_name FROM pgmq.list_notify_insert_throttles();
SELECT pgmq.disable_notify_insert('notify_q');
SELECT pgmq.disable_notify_insert('notify_missing');
SELECT pgmq.send('notify_q', '{"n": 10}') > 0 AS sent_without_trigger;
-- Re-enabling after a disable works, with the new interval.
SELECT pgmq.enable_notify_insert('notify_q', 1000);
SELECT queue_name, throttle_interval_ms, last_notified_at = 'epoch' AS at_epoch FROM pgmq.list_notify_insert_throttles();
-- Enabling it again replaces the trigger (still one) and the interval.
SELECT pgmq.enable_notify_insert('notify_q', 500);
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'pgmq.q_notify_q'::regclass;
SELECT queue_name, throttle_interval_ms FROM pgmq.list_notify_insert_throttles();

-------------------------------------------------------------------------------
-- drop_queue removes the throttle row (ON DELETE CASCADE from meta), and
-- the trigger with the table.
-------------------------------------------------------------------------------
SELECT pgmq.drop_queue('notify_q');
SELECT pgmq.drop_queue('Notify_Mixed');
SELECT pgmq.drop_queue('notify_off');
SELECT * FROM pgmq.list_notify_insert_throttles();
SELECT count(*) AS throttle_rows FROM pgmq.notify_insert_throttle;
