-- features_together: pairs of features used on one queue, where each could
-- change what the other does (the table in docs/architecture.md, "Features
-- together", names the check of each pair). Dead letters, retry,
-- deduplication and retention with pause, priorities, move/unarchive, FIFO
-- groups, topics and insert notifications; then a worker given
-- grant_queue_access using every policy function. Partitioned queues are in
-- features_together_partitioned. Messages are shown by their body, ids
-- relative to a first id, times as booleans.
\set VERBOSITY terse
SET client_min_messages = warning;
-- Rescans would repair a head that hides a message: never, here.
SET pgmq.queue_head_refresh_interval = 0;
SET pgmq.queue_head_rescan_interval = '1h';

-- Whether an insert notified since the last reset: notifications are on
-- with an interval of an hour, so only the first insert after a reset
-- stamps its queue's throttle row (notify.sql shows the stamp is the NOTIFY).
CREATE FUNCTION pg_temp.reset_stamps() RETURNS void LANGUAGE sql AS
  $$ UPDATE pgmq.notify_insert_throttle SET last_notified_at = 'epoch' WHERE queue_name LIKE 'fx\_%' $$;
CREATE VIEW pg_temp.stamped AS
  SELECT queue_name FROM pgmq.notify_insert_throttle WHERE queue_name LIKE 'fx\_%' AND last_notified_at > 'epoch'
  ORDER BY 1;

-------------------------------------------------------------------------------
-- Dead letters and pause: a paused queue moves nothing at its reads; an
-- operator may still set a message aside or redrive into it.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_pd', 'fx_pd_dlq']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_pd', 'fx_pd_dlq', 1);
SELECT count(*) FROM pgmq.send_batch('fx_pd', ARRAY['{"n": "a"}', '{"n": "b"}']::jsonb[]);
-- Both delivered once: at their limit, the next read would move them.
SELECT message->>'n' AS n, read_ct FROM pgmq.read('fx_pd', 0, 10);
SELECT pgmq.pause('fx_pd');
SELECT count(*) AS read FROM pgmq.read('fx_pd', 0, 10);
SELECT count(*) AS read_with_poll FROM pgmq.read_with_poll('fx_pd', 0, 10, 1, 100);
SELECT count(*) AS read_grouped FROM pgmq.read_grouped('fx_pd', 0, 10);
SELECT count(*) AS read_grouped_head FROM pgmq.read_grouped_head('fx_pd', 0, 10);
SELECT count(*) AS read_multi FROM pgmq.read_multi(ARRAY['fx_pd'], 0, 10);
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_fx_pd_dlq) AS dead_lettered FROM pgmq.q_fx_pd;
-- dead_letter works while paused, into a paused dead-letter queue too.
SELECT pgmq.pause('fx_pd_dlq');
SELECT pgmq.dead_letter('fx_pd', (SELECT msg_id FROM pgmq.q_fx_pd WHERE message->>'n' = 'a'), 'looked at while paused');
SELECT count(*) AS read_dlq FROM pgmq.read('fx_pd_dlq', 0, 10);
SELECT message->>'n' AS n, headers #>> '{x-pgmq-dead-letter,reason}' AS reason FROM pgmq.peek('fx_pd_dlq');
-- Redriven into the paused queue, it waits there with the other.
SELECT pgmq.redrive('fx_pd_dlq', 'fx_pd');
SELECT count(*) AS read FROM pgmq.read('fx_pd', 0, 10);
-- Resumed: the redriven message (read_ct 0) is delivered, the one at its
-- limit moves.
SELECT pgmq.resume('fx_pd');
SELECT message->>'n' AS n, read_ct FROM pgmq.read('fx_pd', 0, 10);
SELECT message->>'n' AS n, headers #>> '{x-pgmq-dead-letter,reason}' AS reason FROM pgmq.peek('fx_pd_dlq');

-------------------------------------------------------------------------------
-- Dead letters and priorities: a dead letter keeps its x-pgmq-priority, and
-- redriven it is read before lower priorities again.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_pr', 'fx_pr_dlq']) AS q;
SELECT pgmq.set_priority('fx_pr', 3);
SELECT pgmq.set_dead_letter_queue('fx_pr', 'fx_pr_dlq', 5);
SELECT count(*) FROM pgmq.send_batch('fx_pr', ARRAY['{"n": "low"}', '{"n": "urgent"}']::jsonb[],
                                     ARRAY['{}', '{"x-pgmq-priority": 2}']::jsonb[]);
SELECT pgmq.dead_letter('fx_pr', (SELECT msg_id FROM pgmq.q_fx_pr WHERE message->>'n' = 'urgent'), 'downstream down');
SELECT message->>'n' AS n, headers->'x-pgmq-priority' AS priority FROM pgmq.peek('fx_pr_dlq');
SELECT count(*) FROM pgmq.send('fx_pr', '{"n": "normal"}', '{"x-pgmq-priority": 1}'::jsonb);
SELECT pgmq.redrive('fx_pr_dlq', 'fx_pr');
-- Now the newest message of the queue, and still read first.
SELECT message->>'n' AS n, headers->'x-pgmq-priority' AS priority FROM pgmq.read('fx_pr', 0, 10);

-------------------------------------------------------------------------------
-- Dead letters and move/unarchive: a dead letter moved elsewhere keeps
-- x-pgmq-dead-letter (redrive goes on from there); one archived in the
-- dead-letter queue and unarchived goes home with redrive_all.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_mv', 'fx_mv_dlq', 'fx_mv_park']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_mv', 'fx_mv_dlq', 1);
SELECT count(*) FROM pgmq.send_batch('fx_mv', ARRAY['{"n": "parked"}', '{"n": "archived"}']::jsonb[],
                                     ARRAY['{"trace": "t1"}', '{"trace": "t2"}']::jsonb[]);
SELECT count(*) FROM pgmq.dead_letter('fx_mv', ARRAY(SELECT msg_id FROM pgmq.q_fx_mv), 'bad input');
SELECT count(*) AS moved FROM pgmq.move('fx_mv_dlq', 'fx_mv_park',
    ARRAY(SELECT msg_id FROM pgmq.q_fx_mv_dlq WHERE message->>'n' = 'parked'));
SELECT message->>'n' AS n, headers->>'trace' AS trace, headers #>> '{x-pgmq-dead-letter,queue}' AS dead_letter_of,
       headers #>> '{x-pgmq-dead-letter,reason}' AS reason, headers #>> '{x-pgmq-moved-from,queue}' AS moved_from
  FROM pgmq.peek('fx_mv_park');
SELECT pgmq.redrive('fx_mv_park', 'fx_mv');
SELECT pgmq.archive('fx_mv_dlq', (SELECT msg_id FROM pgmq.q_fx_mv_dlq));
SELECT count(*) AS unarchived FROM pgmq.unarchive('fx_mv_dlq', ARRAY(SELECT msg_id FROM pgmq.a_fx_mv_dlq));
SELECT * FROM pgmq.redrive_all('fx_mv_dlq');
-- Both home, their own headers back (the move's note kept), nothing left over.
SELECT message->>'n' AS n, headers - 'x-pgmq-failures' - 'x-pgmq-moved-from' AS headers,
       headers #>> '{x-pgmq-moved-from,queue}' AS moved_from FROM pgmq.q_fx_mv ORDER BY msg_id;
SELECT (SELECT count(*) FROM pgmq.q_fx_mv_dlq) + (SELECT count(*) FROM pgmq.a_fx_mv_dlq)
       + (SELECT count(*) FROM pgmq.q_fx_mv_park) AS left_over;

-------------------------------------------------------------------------------
-- Dead letters and topics: a topic message dead-letters as any other; the
-- dead-letter queue's own binding gets a copy, which redrive_all leaves.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_tp', 'fx_tp_dlq']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_tp', 'fx_tp_dlq', 1);
SELECT pgmq.bind_topic('fx.orders.*', 'fx_tp');
SELECT pgmq.bind_topic('fx.#', 'fx_tp_dlq');
SELECT pgmq.send_topic('fx.orders.new', '{"order": 1}');
SELECT count(*) AS first_read FROM pgmq.read('fx_tp', 0, 10);
SELECT count(*) AS second_read FROM pgmq.read('fx_tp', 0, 10);
SELECT message, headers #>> '{x-pgmq-dead-letter,queue}' AS dead_letter_of FROM pgmq.q_fx_tp_dlq ORDER BY msg_id;
SELECT * FROM pgmq.redrive_all('fx_tp_dlq');
SELECT 'fx_tp' AS queue, message FROM pgmq.q_fx_tp UNION ALL SELECT 'fx_tp_dlq', message FROM pgmq.q_fx_tp_dlq ORDER BY 1;
SELECT pgmq.unbind_topic('fx.orders.*', 'fx_tp');
SELECT pgmq.unbind_topic('fx.#', 'fx_tp_dlq');

-------------------------------------------------------------------------------
-- Dead letters and deduplication: a producer's resend of a dead-lettered
-- message within the window adds nothing (the first msg_id comes back);
-- redrive brings the message back, not taken for a duplicate.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_dd', 'fx_dd_dlq']) AS q;
SELECT pgmq.set_deduplication('fx_dd', '1 hour');
SELECT pgmq.set_dead_letter_queue('fx_dd', 'fx_dd_dlq', 3);
SELECT pgmq.send('fx_dd', '{"pay": 10}', '{"x-pgmq-deduplication-id": "pay-10"}'::jsonb) AS pay10 \gset
SELECT pgmq.dead_letter('fx_dd', :pay10::bigint, 'card declined');
SELECT pgmq.send('fx_dd', '{"pay": 10}', '{"x-pgmq-deduplication-id": "pay-10"}'::jsonb) = :pay10 AS first_id;
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_fx_dd_dlq) AS dead_lettered FROM pgmq.q_fx_dd;
SELECT pgmq.redrive('fx_dd_dlq', 'fx_dd');
SELECT message, headers->>'x-pgmq-deduplication-id' AS dedup_id FROM pgmq.q_fx_dd;

-------------------------------------------------------------------------------
-- Dead letters and retention: a dead letter starts over in the dead-letter
-- queue (its retention counts from the move; the original enqueued_at is in
-- x-pgmq-dead-letter), and retention deletes old messages without moving
-- them there.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_rn', 'fx_rn_dlq']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_rn', 'fx_rn_dlq', 3);
SELECT pgmq.set_retention('fx_rn_dlq', '1 hour');
SELECT count(*) FROM pgmq.send_batch('fx_rn', ARRAY['{"n": "old, dead-lettered"}', '{"n": "old, expired"}']::jsonb[]);
UPDATE pgmq.q_fx_rn SET enqueued_at = now() - interval '2 hours';
SELECT pgmq.dead_letter('fx_rn', (SELECT msg_id FROM pgmq.q_fx_rn WHERE message->>'n' = 'old, dead-lettered'));
SELECT pgmq.apply_retention('fx_rn_dlq') AS deleted_from_dlq;
SELECT message->>'n' AS n, enqueued_at > now() - interval '1 minute' AS enqueued_at_move,
       (headers #>> '{x-pgmq-dead-letter,enqueued_at}')::timestamptz < now() - interval '1 hour' AS original_kept
  FROM pgmq.q_fx_rn_dlq;
SELECT pgmq.set_retention('fx_rn', '1 hour');
SELECT pgmq.apply_retention('fx_rn') AS deleted;
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_fx_rn_dlq) AS dead_lettered FROM pgmq.q_fx_rn;

-------------------------------------------------------------------------------
-- Retry and FIFO groups: a retried head holds its group until its backoff
-- ends (the group's next message waits), other groups go on; then the head
-- comes first again.
-------------------------------------------------------------------------------
SELECT pgmq.create('fx_rf');
SELECT pgmq.set_retry_backoff('fx_rf', 60, 60);
SELECT count(*) FROM pgmq.send_batch('fx_rf', ARRAY['{"n": "a1"}', '{"n": "a2"}', '{"n": "b1"}']::jsonb[],
    ARRAY['{"x-pgmq-group": "a"}', '{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}']::jsonb[]);
SELECT message->>'n' AS n FROM pgmq.read_grouped('fx_rf', 30, 1);
SELECT message->>'n' AS n, vt > now() + interval '50 seconds' AS backing_off
  FROM pgmq.retry('fx_rf', (SELECT msg_id FROM pgmq.q_fx_rf WHERE message->>'n' = 'a1'), 'timeout');
SELECT message->>'n' AS n FROM pgmq.read_grouped('fx_rf', 0, 10);
SELECT message->>'n' AS n FROM pgmq.read_grouped_rr('fx_rf', 0, 10);
SELECT message->>'n' AS n FROM pgmq.read_grouped_head('fx_rf', 0, 10);
SELECT pgmq.create_fifo_index('fx_rf');
SELECT message->>'n' AS n FROM pgmq.read_grouped_rr('fx_rf', 0, 10);
-- The backoff is over.
UPDATE pgmq.q_fx_rf SET vt = now() WHERE message->>'n' = 'a1';
SELECT message->>'n' AS n, read_ct FROM pgmq.read_grouped('fx_rf', 30, 10);

-------------------------------------------------------------------------------
-- Retry and priorities, pause: a retried message keeps its priority; while
-- the queue is paused a retry is taken but nothing is delivered, and after
-- resume the highest priority comes first.
-------------------------------------------------------------------------------
SELECT pgmq.create('fx_rp');
SELECT pgmq.set_priority('fx_rp', 3);
SELECT pgmq.set_retry_backoff('fx_rp', 0, 0);
SELECT count(*) FROM pgmq.send_batch('fx_rp', ARRAY['{"n": "urgent"}', '{"n": "low"}']::jsonb[],
                                     ARRAY['{"x-pgmq-priority": 2}', '{}']::jsonb[]);
SELECT message->>'n' AS n FROM pgmq.read('fx_rp', 30, 1);
SELECT pgmq.pause('fx_rp');
SELECT message->>'n' AS n, headers->'x-pgmq-priority' AS priority, vt <= clock_timestamp() AS visible
  FROM pgmq.retry('fx_rp', (SELECT msg_id FROM pgmq.q_fx_rp WHERE message->>'n' = 'urgent'), 'try again');
SELECT count(*) AS read_while_paused FROM pgmq.read('fx_rp', 30, 10);
SELECT pgmq.resume('fx_rp');
SELECT message->>'n' AS n, read_ct, jsonb_array_length(headers->'x-pgmq-failures') AS failures
  FROM pgmq.read('fx_rp', 30, 10);

-------------------------------------------------------------------------------
-- Retry and move/unarchive, retention: a message waiting out its backoff,
-- moved, is visible at once in the target with its failure history; an
-- archived retried message comes back with its read_ct and history; retry
-- keeps enqueued_at, so retention still deletes an old message in backoff.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_rm', 'fx_rm_to']) AS q;
SELECT pgmq.set_retry_backoff('fx_rm', 300, 300);
SELECT count(*) FROM pgmq.send_batch('fx_rm', ARRAY['{"n": "moved"}', '{"n": "archived"}', '{"n": "expired"}']::jsonb[]);
SELECT count(*) FROM pgmq.read('fx_rm', 30, 10);
SELECT count(*) FROM pgmq.q_fx_rm AS q, LATERAL pgmq.retry('fx_rm', q.msg_id, 'no answer');
SELECT count(*) AS moved FROM pgmq.move('fx_rm', 'fx_rm_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_rm WHERE message->>'n' = 'moved'));
SELECT message->>'n' AS n, read_ct, vt <= clock_timestamp() AS visible,
       headers #>> '{x-pgmq-failures,0,reason}' AS failure FROM pgmq.q_fx_rm_to;
SELECT pgmq.archive('fx_rm', (SELECT msg_id FROM pgmq.q_fx_rm WHERE message->>'n' = 'archived'));
SELECT count(*) AS unarchived FROM pgmq.unarchive('fx_rm', ARRAY(SELECT msg_id FROM pgmq.a_fx_rm));
SELECT message->>'n' AS n, read_ct, vt <= clock_timestamp() AS visible,
       headers #>> '{x-pgmq-failures,0,reason}' AS failure FROM pgmq.q_fx_rm WHERE message->>'n' = 'archived';
UPDATE pgmq.q_fx_rm SET enqueued_at = now() - interval '2 hours' WHERE message->>'n' = 'expired';
SELECT count(*) FROM pgmq.retry('fx_rm', (SELECT msg_id FROM pgmq.q_fx_rm WHERE message->>'n' = 'expired'), 'again');
SELECT pgmq.set_retention('fx_rm', '1 hour');
SELECT pgmq.apply_retention('fx_rm') AS deleted;
SELECT message->>'n' AS n FROM pgmq.q_fx_rm;

-------------------------------------------------------------------------------
-- Deduplication and topics, priorities, pause, notifications: topic sends
-- are sends (each bound queue deduplicates with its own policy and checks
-- its own priority levels; a value one queue refuses sends nothing
-- anywhere); a paused queue accepts and deduplicates; a duplicate inserts
-- nothing, so it does not notify.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_dt', 'fx_dt_plain']) AS q;
SELECT pgmq.set_deduplication('fx_dt', '1 hour');
SELECT pgmq.set_priority('fx_dt', 3);
SELECT pgmq.enable_notify_insert('fx_dt', 3600000);
SELECT pgmq.bind_topic('fx.pay.*', q) FROM unnest(ARRAY['fx_dt', 'fx_dt_plain']) AS q;
SELECT pgmq.send_topic('fx.pay.new', '{"pay": 1}', '{"x-pgmq-deduplication-id": "p1", "x-pgmq-priority": 1}', 0);
SELECT pg_temp.reset_stamps();
SELECT pgmq.pause('fx_dt');
SELECT pgmq.send_topic('fx.pay.new', '{"pay": 1}', '{"x-pgmq-deduplication-id": "p1", "x-pgmq-priority": 1}', 0);
SELECT * FROM pg_temp.stamped;
SELECT queue_name, count(*) FROM pgmq.send_batch_topic('fx.pay.new', ARRAY['{"pay": 1}', '{"pay": 2}']::jsonb[],
    ARRAY['{"x-pgmq-deduplication-id": "p1"}', '{"x-pgmq-deduplication-id": "p2", "x-pgmq-priority": 2}']::jsonb[])
 GROUP BY 1 ORDER BY 1;
SELECT * FROM pg_temp.stamped;
SELECT pgmq.send_topic('fx.pay.new', '{"pay": 3}', '{"x-pgmq-priority": 3}', 0);
SELECT 'fx_dt' AS queue, message, headers->'x-pgmq-priority' AS priority FROM pgmq.q_fx_dt
 UNION ALL SELECT 'fx_dt_plain', message, headers->'x-pgmq-priority' FROM pgmq.q_fx_dt_plain ORDER BY 1, 2;
-- A duplicate with another priority is the first message, as it was sent.
SELECT count(*) FROM pgmq.send('fx_dt', '{"pay": 2}', '{"x-pgmq-deduplication-id": "p2", "x-pgmq-priority": 0}'::jsonb);
SELECT pgmq.resume('fx_dt');
SELECT message, headers->'x-pgmq-priority' AS priority FROM pgmq.read('fx_dt', 30, 10);
SELECT pgmq.unbind_topic('fx.pay.*', q) FROM unnest(ARRAY['fx_dt', 'fx_dt_plain']) AS q;

-------------------------------------------------------------------------------
-- Deduplication and move/unarchive, retention: a move is no send (the
-- target keeps a moved message whose id it has seen, and does not record
-- the id); an unarchived message keeps its msg_id, which its id still
-- names; a message deleted by retention still answers its id in the window.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_dm', 'fx_dm_to']) AS q;
SELECT pgmq.set_deduplication(q, '1 day') FROM unnest(ARRAY['fx_dm', 'fx_dm_to']) AS q;
SELECT pgmq.send('fx_dm', '{"n": "moved"}', '{"x-pgmq-deduplication-id": "m1"}'::jsonb) AS m1 \gset
SELECT pgmq.send('fx_dm_to', '{"n": "already there"}', '{"x-pgmq-deduplication-id": "m1"}'::jsonb) AS there \gset
SELECT count(*) AS moved FROM pgmq.move('fx_dm', 'fx_dm_to', ARRAY[:m1::bigint]);
SELECT message->>'n' AS n, headers->>'x-pgmq-deduplication-id' AS dedup_id FROM pgmq.q_fx_dm_to ORDER BY msg_id;
SELECT pgmq.send('fx_dm_to', '{"n": "resent"}', '{"x-pgmq-deduplication-id": "m1"}'::jsonb) = :there AS first_id;
-- The source still knows the id it was sent with.
SELECT pgmq.send('fx_dm', '{"n": "resent"}', '{"x-pgmq-deduplication-id": "m1"}'::jsonb) = :m1 AS first_id;
SELECT count(*) AS in_source FROM pgmq.q_fx_dm;
SELECT pgmq.send('fx_dm', '{"n": "archived"}', '{"x-pgmq-deduplication-id": "a1"}'::jsonb) AS a1 \gset
SELECT pgmq.archive('fx_dm', :a1::bigint);
SELECT u = :a1 AS same_id FROM pgmq.unarchive('fx_dm', ARRAY[:a1::bigint]) AS u;
SELECT pgmq.send('fx_dm', '{"n": "archived"}', '{"x-pgmq-deduplication-id": "a1"}'::jsonb) = :a1 AS first_id;
SELECT pgmq.set_retention('fx_dm', '1 hour');
UPDATE pgmq.q_fx_dm SET enqueued_at = now() - interval '2 hours';
SELECT pgmq.apply_retention('fx_dm') AS deleted;
SELECT pgmq.send('fx_dm', '{"n": "archived"}', '{"x-pgmq-deduplication-id": "a1"}'::jsonb) = :a1 AS first_id;
SELECT count(*) AS in_source FROM pgmq.q_fx_dm;

-------------------------------------------------------------------------------
-- Retention and pause, move/unarchive: retention applies to a paused queue
-- (a pause holds delivery, not age); a moved message starts over in its
-- target; an unarchived one keeps its enqueued_at and its age.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_ra', 'fx_ra_to']) AS q;
SELECT pgmq.set_retention(q, '1 hour', '1 day') FROM unnest(ARRAY['fx_ra', 'fx_ra_to']) AS q;
SELECT count(*) FROM pgmq.send_batch('fx_ra', ARRAY['{"n": "kept waiting"}', '{"n": "moved"}', '{"n": "unarchived"}']::jsonb[]);
UPDATE pgmq.q_fx_ra SET enqueued_at = now() - interval '2 hours';
SELECT pgmq.pause('fx_ra');
SELECT count(*) AS moved FROM pgmq.move('fx_ra', 'fx_ra_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_ra WHERE message->>'n' = 'moved'));
SELECT pgmq.archive('fx_ra', (SELECT msg_id FROM pgmq.q_fx_ra WHERE message->>'n' = 'unarchived'));
SELECT pgmq.apply_retention('fx_ra') AS deleted;
SELECT count(*) AS unarchived FROM pgmq.unarchive('fx_ra', ARRAY(SELECT msg_id FROM pgmq.a_fx_ra));
SELECT pgmq.apply_retention('fx_ra') AS deleted;
SELECT pgmq.apply_retention('fx_ra_to') AS deleted;
SELECT 'fx_ra' AS queue, message FROM pgmq.q_fx_ra UNION ALL SELECT 'fx_ra_to', message FROM pgmq.q_fx_ra_to ORDER BY 1;
SELECT pgmq.resume('fx_ra');

-------------------------------------------------------------------------------
-- Pause and move, topics: messages move out of a paused queue (repairs
-- while delivery is held) and into a paused one, where they wait; topic
-- sends to a paused queue wait too.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_pm', 'fx_pm_to']) AS q;
SELECT count(*) FROM pgmq.send_batch('fx_pm', ARRAY['{"n": 1}', '{"n": 2}']::jsonb[]);
SELECT pgmq.pause(q) FROM unnest(ARRAY['fx_pm', 'fx_pm_to']) AS q;
SELECT pgmq.bind_topic('fx.hold', 'fx_pm_to');
SELECT pgmq.send_topic('fx.hold', '{"n": 3}');
SELECT count(*) AS moved FROM pgmq.move('fx_pm', 'fx_pm_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_pm WHERE message->>'n' = '1'));
SELECT count(*) AS read FROM pgmq.read_multi(ARRAY['fx_pm', 'fx_pm_to'], 30, 10);
SELECT pgmq.resume('fx_pm_to');
SELECT message FROM pgmq.read('fx_pm_to', 30, 10);
SELECT pgmq.unbind_topic('fx.hold', 'fx_pm_to');
SELECT pgmq.resume('fx_pm');

-------------------------------------------------------------------------------
-- Priorities and move/unarchive: a moved message keeps x-pgmq-priority and
-- a target with priorities reads it by it; an unarchived one too (before an
-- older message of lower priority).
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_pv', 'fx_pv_to']) AS q;
SELECT pgmq.set_priority('fx_pv_to', 3);
SELECT count(*) FROM pgmq.send('fx_pv_to', '{"n": "resident"}', '{"x-pgmq-priority": 1}'::jsonb);
SELECT count(*) FROM pgmq.send_batch('fx_pv', ARRAY['{"n": "early, low"}', '{"n": "moved high"}', '{"n": "moved plain"}', '{"n": "unarchived"}']::jsonb[],
    ARRAY['{}', '{"x-pgmq-priority": 2}', '{}', '{"x-pgmq-priority": 2}']::jsonb[]);
SELECT count(*) AS moved FROM pgmq.move('fx_pv', 'fx_pv_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_pv WHERE message->>'n' LIKE 'moved%'));
SELECT message->>'n' AS n, headers->'x-pgmq-priority' AS priority FROM pgmq.read('fx_pv_to', 30, 10);
SELECT pgmq.set_priority('fx_pv', 3);
SELECT pgmq.archive('fx_pv', (SELECT msg_id FROM pgmq.q_fx_pv WHERE message->>'n' = 'unarchived'));
SELECT count(*) FROM pgmq.unarchive('fx_pv', ARRAY(SELECT msg_id FROM pgmq.a_fx_pv));
SELECT message->>'n' AS n FROM pgmq.read('fx_pv', 30, 10);

-------------------------------------------------------------------------------
-- FIFO groups and move/unarchive: x-pgmq-group travels with a moved
-- message, whose group goes on in the target after the messages it already
-- had; an unarchived head takes its place in its group again (its old id).
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_fm', 'fx_fm_to']) AS q;
SELECT count(*) FROM pgmq.send('fx_fm_to', '{"n": "g0"}', '{"x-pgmq-group": "g"}'::jsonb);
SELECT count(*) FROM pgmq.send_batch('fx_fm', ARRAY['{"n": "g1"}', '{"n": "g2"}', '{"n": "h1"}', '{"n": "h2"}']::jsonb[],
    ARRAY['{"x-pgmq-group": "g"}', '{"x-pgmq-group": "g"}', '{"x-pgmq-group": "h"}', '{"x-pgmq-group": "h"}']::jsonb[]);
SELECT count(*) AS moved FROM pgmq.move('fx_fm', 'fx_fm_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_fm WHERE message->>'n' LIKE 'g%'));
SELECT message->>'n' AS n FROM pgmq.read_grouped('fx_fm_to', 30, 10);
SELECT pgmq.archive('fx_fm', (SELECT msg_id FROM pgmq.q_fx_fm WHERE message->>'n' = 'h1'));
SELECT message->>'n' AS n FROM pgmq.read_grouped_head('fx_fm', 0, 10);
SELECT count(*) FROM pgmq.unarchive('fx_fm', ARRAY(SELECT msg_id FROM pgmq.a_fx_fm));
SELECT message->>'n' AS n FROM pgmq.read_grouped_head('fx_fm', 30, 10);

-------------------------------------------------------------------------------
-- Insert notifications: every path that inserts messages notifies their
-- queue (move, unarchive, redrive, a read's dead-letter move, dead_letter,
-- send_topic); a pause does not stop them; retry inserts nothing.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_nq', 'fx_nq_dlq', 'fx_nq_to']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_nq', 'fx_nq_dlq', 1);
SELECT pgmq.set_retry_backoff('fx_nq', 0, 0);
SELECT pgmq.enable_notify_insert(q, 3600000) FROM unnest(ARRAY['fx_nq', 'fx_nq_dlq', 'fx_nq_to']) AS q;
SELECT count(*) FROM pgmq.send_batch('fx_nq', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT pg_temp.reset_stamps();
SELECT count(*) AS moved FROM pgmq.move('fx_nq', 'fx_nq_to', ARRAY(SELECT msg_id FROM pgmq.q_fx_nq WHERE message->>'n' = '1'));
SELECT * FROM pg_temp.stamped;
SELECT pg_temp.reset_stamps();
SELECT pgmq.archive('fx_nq_to', (SELECT msg_id FROM pgmq.q_fx_nq_to));
SELECT count(*) AS unarchived FROM pgmq.unarchive('fx_nq_to', ARRAY(SELECT msg_id FROM pgmq.a_fx_nq_to));
SELECT * FROM pg_temp.stamped;
SELECT pg_temp.reset_stamps();
SELECT pgmq.dead_letter('fx_nq', (SELECT msg_id FROM pgmq.q_fx_nq WHERE message->>'n' = '2'));
SELECT * FROM pg_temp.stamped;
SELECT pg_temp.reset_stamps();
SELECT pgmq.redrive('fx_nq_dlq', 'fx_nq');
SELECT * FROM pg_temp.stamped;
SELECT pg_temp.reset_stamps();
SELECT count(*) AS read FROM pgmq.read('fx_nq', 0, 10);
SELECT count(*) AS retried FROM pgmq.q_fx_nq AS q, LATERAL pgmq.retry('fx_nq', q.msg_id, 'later');
SELECT count(*) AS stamped_by_retry FROM pg_temp.stamped;
SELECT count(*) AS read_moves_them FROM pgmq.read('fx_nq', 0, 10);
SELECT * FROM pg_temp.stamped;
SELECT pg_temp.reset_stamps();
SELECT pgmq.pause('fx_nq');
SELECT pgmq.bind_topic('fx.notify', 'fx_nq');
SELECT pgmq.send_topic('fx.notify', '{"n": 4}');
SELECT * FROM pg_temp.stamped;
SELECT pgmq.unbind_topic('fx.notify', 'fx_nq');
SELECT pgmq.resume('fx_nq');

-------------------------------------------------------------------------------
-- A worker given grant_queue_access (and nothing else) on a queue with
-- every policy and on its dead-letter queue: sends with a deduplication id
-- and a priority, reads (moving dead letters), FIFO reads, retry,
-- dead_letter, redrive, redrive_all, queue_state, list_policies and moves
-- between the two, with its own rights; it cannot change a policy or pause,
-- nor unarchive or apply archive retention (no DELETE on the archive). Topic
-- sends and sends to a queue with insert notifications need the grants
-- permissions.md lists besides.
-------------------------------------------------------------------------------
SELECT pgmq.create(q) FROM unnest(ARRAY['fx_gq', 'fx_gq_dlq', 'fx_gq_other']) AS q;
SELECT pgmq.set_dead_letter_queue('fx_gq', 'fx_gq_dlq', 2);
SELECT pgmq.set_retry_backoff('fx_gq', 0, 0);
SELECT pgmq.set_deduplication('fx_gq', '1 hour');
SELECT pgmq.set_retention('fx_gq', '1 day', '1 day');
SELECT pgmq.set_priority('fx_gq', 3);
CREATE ROLE regress_fx_worker;
SELECT pgmq.grant_queue_access(q, 'regress_fx_worker') FROM unnest(ARRAY['fx_gq', 'fx_gq_dlq']) AS q;
SELECT pgmq.bind_topic('fx.work.*', q) FROM unnest(ARRAY['fx_gq', 'fx_gq_other']) AS q;
SET ROLE regress_fx_worker;
SELECT pgmq.send('fx_gq', '{"job": 1}', '{"x-pgmq-deduplication-id": "j1"}'::jsonb) AS j1 \gset
SELECT pgmq.send('fx_gq', '{"job": 1}', '{"x-pgmq-deduplication-id": "j1"}'::jsonb) = :j1 AS first_id;
-- Its sends are checked against the priority levels.
SELECT pgmq.send('fx_gq', '{"job": 2}', '{"x-pgmq-priority": 5}'::jsonb);
SELECT count(*) FROM pgmq.send('fx_gq', '{"job": 2}', '{"x-pgmq-priority": 2, "x-pgmq-group": "g"}'::jsonb);
-- A topic send reads pgmq.topic_bindings, which grant_queue_access leaves
-- out; with SELECT on it, it reaches the bound queue the worker may send
-- to, and skips the other.
SELECT pgmq.send_topic('fx.work.new', '{"job": 3}');
RESET ROLE;
GRANT SELECT ON pgmq.topic_bindings TO regress_fx_worker;
SET ROLE regress_fx_worker;
SELECT pgmq.send_topic('fx.work.new', '{"job": 3}', '{"x-pgmq-priority": 1}', 0) AS delivered_to;
SELECT message, read_ct FROM pgmq.read('fx_gq', 0, 10);
SELECT message, read_ct FROM pgmq.read_grouped('fx_gq', 0, 10);
SELECT message, read_ct, headers #>> '{x-pgmq-failures,0,reason}' AS reason
  FROM pgmq.retry('fx_gq', :j1::bigint, 'worker failed');
SELECT pgmq.dead_letter('fx_gq', :j1::bigint, 'worker gave up');
-- The other two, at their limit, move at this read.
SELECT count(*) AS read FROM pgmq.read('fx_gq', 0, 10);
SELECT message, headers #>> '{x-pgmq-dead-letter,reason}' AS reason FROM pgmq.peek('fx_gq_dlq');
SELECT queue_name, dead_letter_queue, dead_lettered, priority_levels FROM pgmq.list_policies() WHERE queue_name = 'fx_gq';
SELECT queue_name, paused, priority_levels, dead_letter_queue, dead_lettered, dead_letter_for, visible_length
  FROM pgmq.queue_state('fx_gq');
SELECT queue_name, dead_letter_for, visible_length FROM pgmq.queue_state('fx_gq_dlq');
SELECT pgmq.redrive('fx_gq_dlq', 'fx_gq', 1);
SELECT * FROM pgmq.redrive_all('fx_gq_dlq');
SELECT message, read_ct FROM pgmq.q_fx_gq ORDER BY msg_id;
SELECT count(*) AS moved FROM pgmq.move('fx_gq', 'fx_gq_dlq', ARRAY(SELECT msg_id FROM pgmq.q_fx_gq WHERE message->>'job' = '1'));
SELECT message, headers ? 'x-pgmq-moved-from' AS moved FROM pgmq.q_fx_gq_dlq;
-- What stays the owner's.
SELECT pgmq.pause('fx_gq');
SELECT pgmq.set_retention('fx_gq', '1 hour');
SELECT pgmq.clear_dead_letter_queue('fx_gq');
SELECT pgmq.set_priority('fx_gq', 2);
SELECT pgmq.archive('fx_gq', (SELECT msg_id FROM pgmq.q_fx_gq WHERE message->>'job' = '2'));
SELECT * FROM pgmq.unarchive('fx_gq', ARRAY(SELECT msg_id FROM pgmq.a_fx_gq));
SELECT pgmq.apply_retention('fx_gq');
-- queue_state_all, like list_queues, lists every queue of pgmq.meta.
SELECT count(*) FROM pgmq.queue_state_all();
RESET ROLE;
-- The worker's reads obey the owner's pause.
SELECT pgmq.pause('fx_gq');
SET ROLE regress_fx_worker;
SELECT count(*) AS read_while_paused FROM pgmq.read('fx_gq', 0, 10);
RESET ROLE;
SELECT pgmq.resume('fx_gq');
-- Insert notifications: the trigger stamps the throttle row as the sender.
SELECT pgmq.enable_notify_insert('fx_gq', 0);
SET ROLE regress_fx_worker;
SELECT pgmq.send('fx_gq', '{"job": 4}');
RESET ROLE;
GRANT SELECT, UPDATE ON pgmq.notify_insert_throttle TO regress_fx_worker;
SET ROLE regress_fx_worker;
SELECT count(*) AS sent FROM pgmq.send('fx_gq', '{"job": 4}');
RESET ROLE;
SELECT message FROM pgmq.q_fx_gq WHERE message ? 'job' ORDER BY msg_id;
SELECT pgmq.unbind_topic('fx.work.*', q) FROM unnest(ARRAY['fx_gq', 'fx_gq_other']) AS q;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM pgmq.meta AS m, LATERAL pgmq.drop_queue(m.queue_name) WHERE m.queue_name LIKE 'fx\_%';
SELECT count(*) AS left_over FROM pgmq.policies WHERE queue_name LIKE 'fx\_%';
DROP OWNED BY regress_fx_worker;
DROP ROLE regress_fx_worker;
