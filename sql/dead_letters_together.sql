-- dead_letters_together: dead letters as applications combine them. A
-- dead-letter queue shared by two queues (redrive moves one queue's own, in
-- their original order; redrive_all sends each home), readers given access
-- with grant_queue_access (they dead-letter without 42501, whether the
-- policy came before or after the grant), why a message failed (retry and
-- dead_letter with a reason, a bounded history), queue_state's figures, and
-- errors whose context names the queue, not pgmq's SQL.
\set VERBOSITY terse
SET client_min_messages = warning;
SELECT pgmq.create(q) FROM unnest(ARRAY['dlt_a', 'dlt_b', 'dlt_shared']) AS q;
SELECT pgmq.set_dead_letter_queue('dlt_a', 'dlt_shared', 2);
SELECT pgmq.set_dead_letter_queue('dlt_b', 'dlt_shared', 2);
SELECT pgmq.send('dlt_a', '{"from": "a", "n": 1}') AS a1 \gset
SELECT pgmq.send('dlt_a', '{"from": "a", "n": 2}') AS a2 \gset
SELECT pgmq.send('dlt_b', '{"from": "b", "n": 1}') AS b1 \gset
SELECT pgmq.send('dlt_shared', '{"sent": "directly"}');

-------------------------------------------------------------------------------
-- Why a message failed: retry and dead_letter take a reason.
-------------------------------------------------------------------------------
SELECT pgmq.set_retry_backoff('dlt_a', 0, 0);
SELECT count(*) AS read FROM pgmq.read('dlt_a', 0, 10);
SELECT msg_id = :a2 AS a2, headers FROM pgmq.retry('dlt_a', :a2, NULL);
SELECT jsonb_path_query_array(headers, '$."x-pgmq-failures"[*].reason') AS reasons,
       jsonb_path_query_array(headers, '$."x-pgmq-failures"[*].read_ct') AS read_cts,
       (headers #>> '{x-pgmq-failures,0,at}')::timestamptz BETWEEN now() AND clock_timestamp() AS at_now
  FROM pgmq.retry('dlt_a', :a2, 'payment API timed out');
-- The history keeps the last five.
SELECT count(*) FROM generate_series(1, 6) AS i, LATERAL pgmq.retry('dlt_a', :a2, 'attempt ' || i);
SELECT jsonb_path_query_array(headers, '$."x-pgmq-failures"[*].reason') AS reasons
  FROM pgmq.q_dlt_a WHERE msg_id = :a2;
SELECT length(headers #>> '{x-pgmq-failures,4,reason}') AS kept_length
  FROM pgmq.retry('dlt_a', :a2, repeat('x', 5000));
-- Set aside now (the later one first), with a reason; the history goes along.
SELECT pgmq.dead_letter('dlt_a', :a2, 'card number rejected');
SELECT pgmq.dead_letter('dlt_b', ARRAY[:b1, 999999], 'schema mismatch') = :b1 AS moved_b1_only;
SELECT pgmq.dead_letter('dlt_a', :a1);
SELECT pgmq.dead_letter('dlt_a', NULL::bigint, 'nothing');
-- Each dead letter says where it came from and why.
SELECT m.message, d.queue AS source, d.msg_id IN (:a1, :a2, :b1) AS original_id, d.reason, d.read_ct,
       jsonb_array_length(m.headers -> 'x-pgmq-failures') AS failures
  FROM pgmq.q_dlt_shared AS m
  LEFT JOIN LATERAL jsonb_to_record(m.headers -> 'x-pgmq-dead-letter') AS d(queue text, msg_id bigint, reason text, read_ct int)
    ON true
 ORDER BY m.msg_id;
-- A queue without a dead-letter queue has nowhere to set messages aside.
SELECT pgmq.dead_letter('dlt_shared', 1, 'no policy');

-------------------------------------------------------------------------------
-- A shared dead-letter queue: counts per source, redrive per source.
-------------------------------------------------------------------------------
SELECT queue_name, dead_letter_queue, dead_lettered FROM pgmq.list_policies() ORDER BY 1;
SELECT queue_name, dead_letter_queue, dead_lettered, dead_letter_for FROM pgmq.queue_state_all() ORDER BY 1;
-- redrive moves only dlt_a's dead letters, in the order they had in dlt_a,
-- with the headers they had (the failure history kept).
SELECT pgmq.redrive('dlt_shared', 'dlt_a', 1);
SELECT message, headers ? 'x-pgmq-dead-letter' AS still_marked FROM pgmq.q_dlt_a ORDER BY msg_id;
SELECT pgmq.redrive('dlt_shared', 'dlt_a');
SELECT message, jsonb_array_length(headers -> 'x-pgmq-failures') AS failures FROM pgmq.q_dlt_a ORDER BY msg_id;
SELECT message FROM pgmq.q_dlt_shared ORDER BY msg_id;
-- redrive_all sends every dead letter home; what came from nowhere stays.
SELECT pgmq.dead_letter('dlt_a', ARRAY(SELECT msg_id FROM pgmq.q_dlt_a), 'again');
SELECT * FROM pgmq.redrive_all('dlt_shared');
SELECT 'dlt_a' AS q, message FROM pgmq.q_dlt_a UNION ALL SELECT 'dlt_b', message FROM pgmq.q_dlt_b
 UNION ALL SELECT 'dlt_shared', message FROM pgmq.q_dlt_shared ORDER BY 1, 2;
-- Dead letters of a dropped queue stay, and redrive_all says so.
SELECT pgmq.dead_letter('dlt_b', ARRAY(SELECT msg_id FROM pgmq.q_dlt_b), 'dropping');
SELECT pgmq.drop_queue('dlt_b');
SET client_min_messages = notice;
SELECT * FROM pgmq.redrive_all('dlt_shared');
SET client_min_messages = warning;

-------------------------------------------------------------------------------
-- queue_state: paused, priorities and the visible / leased / delayed split.
-------------------------------------------------------------------------------
SELECT pgmq.create('dlt_state');
SELECT pgmq.send('dlt_state', '{}') FROM generate_series(1, 3);
SELECT pgmq.send('dlt_state', '{}', 3600);
SELECT count(*) AS leased FROM pgmq.read('dlt_state', 60, 1);
SELECT pgmq.pause('dlt_state');
SELECT pgmq.set_priority('dlt_state', 3);
SELECT queue_name, paused, paused_at IS NOT NULL AS since, priority_levels, dead_letter_queue, dead_lettered,
       dead_letter_for, visible_length, leased_length, delayed_length
  FROM pgmq.queue_state('dlt_state');
SELECT queue_name, paused FROM pgmq.queue_state('DLT_State');
SELECT * FROM pgmq.queue_state('dlt_missing');

-------------------------------------------------------------------------------
-- Readers given access: their reads move dead letters, with no 42501.
-------------------------------------------------------------------------------
CREATE ROLE regress_dlt_worker;
SELECT pgmq.send('dlt_a', '{"for": "worker"}') IS NOT NULL AS sent;
SELECT pgmq.grant_queue_access('dlt_a', 'regress_dlt_worker');
SELECT has_table_privilege('regress_dlt_worker', 'pgmq.q_dlt_shared', 'INSERT') AS may_dead_letter;
SET ROLE regress_dlt_worker;
SELECT count(*) AS first_read FROM pgmq.read('dlt_a', 0, 10);
SELECT count(*) AS second_read FROM pgmq.read('dlt_a', 0, 10);
SELECT count(*) AS third_read FROM pgmq.read('dlt_a', 0, 10);
RESET ROLE;
SELECT message, headers #>> '{x-pgmq-dead-letter,reason}' AS reason FROM pgmq.q_dlt_shared
 WHERE message ? 'for';
-- Given access to the dead-letter queue too, it redrives and asks
-- queue_state, neither of which needs SELECT on pgmq.meta (it has none).
SELECT pgmq.grant_queue_access('dlt_shared', 'regress_dlt_worker');
SET ROLE regress_dlt_worker;
SELECT queue_name, dead_letter_queue, dead_lettered FROM pgmq.queue_state('dlt_a');
SELECT pgmq.redrive('dlt_shared', 'dlt_a');
SELECT message FROM pgmq.q_dlt_a WHERE message ? 'for';
RESET ROLE;
-- Access given before the policy: set_dead_letter_queue extends it.
SELECT pgmq.create(q) FROM unnest(ARRAY['dlt_late', 'dlt_late_dlq']) AS q;
SELECT pgmq.grant_queue_access('dlt_late', 'regress_dlt_worker');
SELECT has_table_privilege('regress_dlt_worker', 'pgmq.q_dlt_late_dlq', 'INSERT') AS before_policy;
SELECT pgmq.set_dead_letter_queue('dlt_late', 'dlt_late_dlq', 1);
SELECT has_table_privilege('regress_dlt_worker', 'pgmq.q_dlt_late_dlq', 'INSERT') AS after_policy;
-- A role given only its own GRANTs on the queue: the error says what is
-- missing and how to fix it; no context prints pgmq's SQL.
CREATE ROLE regress_dlt_plain;
GRANT USAGE ON SCHEMA pgmq TO regress_dlt_plain;
GRANT SELECT, UPDATE, DELETE ON pgmq.q_dlt_state TO regress_dlt_plain;
GRANT SELECT ON pgmq.q_dlt_late TO regress_dlt_plain;
\set VERBOSITY default
SET ROLE regress_dlt_plain;
SELECT count(*) FROM pgmq.read('dlt_a', 0, 1);
SELECT count(*) FROM pgmq.read('dlt_late', 0, 1);
RESET ROLE;
\set VERBOSITY terse
-- An owner who may not grant INSERT on a shared dead-letter queue to its
-- readers cannot set that policy: their reads would fail.
CREATE ROLE regress_dlt_tenant;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_dlt_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_dlt_tenant;
GRANT INSERT ON pgmq.q_dlt_shared TO regress_dlt_tenant;
CREATE ROLE regress_dlt_tenant_worker;
GRANT USAGE ON SCHEMA pgmq TO regress_dlt_tenant_worker;
SET ROLE regress_dlt_tenant;
SELECT pgmq.create('dlt_tenant');
SELECT pgmq.grant_queue_access('dlt_tenant', 'regress_dlt_tenant_worker');
SELECT pgmq.set_dead_letter_queue('dlt_tenant', 'dlt_shared', 3);
SELECT count(*) AS policy FROM pgmq.list_policies() WHERE queue_name = 'dlt_tenant';
SELECT pgmq.drop_queue('dlt_tenant');
RESET ROLE;

SELECT pgmq.drop_queue(q) FROM unnest(ARRAY['dlt_a', 'dlt_shared', 'dlt_state', 'dlt_late', 'dlt_late_dlq']) AS q;
DROP OWNED BY regress_dlt_worker, regress_dlt_plain, regress_dlt_tenant, regress_dlt_tenant_worker;
DROP ROLE regress_dlt_worker, regress_dlt_plain, regress_dlt_tenant, regress_dlt_tenant_worker;
