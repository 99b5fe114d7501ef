-- priority: set_priority(q, levels) makes every read path take the highest
-- x-pgmq-priority first, then the lowest msg_id; sends check the header;
-- rows written with plain SQL never make a read fail; FIFO group reads keep
-- their order; clear_priority restores plain order and drops the index.
\set VERBOSITY terse
SET client_min_messages = warning;
SET stats_fetch_consistency = none;

SELECT pgmq.create('pr_q');
SELECT pgmq.set_priority('pr_q', 1);
SELECT pgmq.set_priority('pr_q', 11);
SELECT pgmq.set_priority('pr_q', NULL);
SELECT pgmq.set_priority('pr_missing', 3);
SELECT pgmq.set_priority('pr_q', 3);
SELECT indexrelid::regclass AS index FROM pg_index WHERE indrelid = 'pgmq.q_pr_q'::regclass ORDER BY 1;
SELECT queue_name, priority_levels FROM pgmq.list_policies();

-- Sends: an integer from 0 to 2 (2.0 is 2), or no header at all.
SELECT * FROM pgmq.send('pr_q', '{"n": 1}');
SELECT * FROM pgmq.send('pr_q', '{"n": 2}', '{"x-pgmq-priority": 2}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 3}', '{"x-pgmq-priority": 1}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 4}', '{"x-pgmq-priority": 2.0, "k": "v"}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 5}', '[1, 2]'::jsonb);
SELECT * FROM pgmq.send_batch('pr_q', ARRAY['{"n": 6}', '{"n": 7}']::jsonb[],
                              ARRAY['{"x-pgmq-priority": 1}', NULL]::jsonb[]);
-- Anything else is refused, naming the value; nothing is sent.
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": 3}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": -1}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": 1.5}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": "1"}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": true}'::jsonb);
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', jsonb_build_object('x-pgmq-priority', repeat('x', 200)));
SELECT * FROM pgmq.send_batch('pr_q', ARRAY['{"n": 0}', '{"n": 0}']::jsonb[],
                              ARRAY['{"x-pgmq-priority": 0}', '{"x-pgmq-priority": [2]}']::jsonb[]);
-- A null priority is no priority, as a missing header: 0.
SELECT * FROM pgmq.send('pr_q', '{"n": 0}', '{"x-pgmq-priority": null}'::jsonb);
SELECT count(*) AS messages FROM pgmq.q_pr_q;

-- Reads: priority 2 (ids 2, 4), then 1 (3, 6), then 0 (1, 5, 7, 8).
SELECT msg_id, message FROM pgmq.read('pr_q', 0, 3);
SELECT msg_id FROM pgmq.read('pr_q', 0, 10);
SELECT msg_id FROM pgmq.read('pr_q', 0, 10, '{"n": 1}');
SELECT msg_id FROM pgmq.read_with_poll('pr_q', 0, 2, 1, 100);
SELECT queue_name, msg_id FROM pgmq.read_multi(ARRAY['pr_q'], 0, 2);
-- The reads used the priority index.
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS priority_index_used FROM pg_stat_user_indexes WHERE indexrelname = 'q_pr_q_priority_idx';
-- A row written with plain SQL, whatever its header, is read, never an error:
-- numbers are floored and kept within 0 to 9, anything else counts as 0.
INSERT INTO pgmq.q_pr_q (vt, message, headers) VALUES
    (now(), '{"n": "sql-7"}', '{"x-pgmq-priority": 7}'),
    (now(), '{"n": "sql-text"}', '{"x-pgmq-priority": "high"}'),
    (now(), '{"n": "sql-huge"}', '{"x-pgmq-priority": 1e300}');
SELECT message->>'n' AS n FROM pgmq.read('pr_q', 0, 4);
-- pop follows the same order.
SELECT message->>'n' AS n FROM pgmq.pop('pr_q', 3);

-- A dead-letter read picks by priority too: "high" (priority 2), at its
-- delivery limit, moves to the dead letters before "low" is looked at.
SELECT pgmq.create('pr_dlq');
SELECT pgmq.purge_queue('pr_q');
SELECT count(*) FROM pgmq.send_batch('pr_q', ARRAY['{"n": "low"}', '{"n": "high"}']::jsonb[],
                                     ARRAY['{}', '{"x-pgmq-priority": 2}']::jsonb[]);
UPDATE pgmq.q_pr_q SET read_ct = 3 WHERE message->>'n' = 'high';
SELECT pgmq.set_dead_letter_queue('pr_q', 'pr_dlq', 3);
SELECT message->>'n' AS n FROM pgmq.read('pr_q', 0, 1);
SELECT message->>'n' AS n FROM pgmq.q_pr_dlq;
SELECT pgmq.clear_dead_letter_queue('pr_q');

-- FIFO group reads keep msg_id order within a group, priorities or not.
SELECT pgmq.purge_queue('pr_q');
SELECT count(*) FROM pgmq.send_batch('pr_q', ARRAY['{"n": 1}', '{"n": 2}']::jsonb[],
    ARRAY['{"x-pgmq-group": "g"}', '{"x-pgmq-group": "g", "x-pgmq-priority": 2}']::jsonb[]);
SELECT message->>'n' AS n FROM pgmq.read_grouped('pr_q', 0, 2);

-- Only the owner sets or clears priorities.
CREATE ROLE regress_pr_user;
GRANT USAGE ON SCHEMA pgmq TO regress_pr_user;
SET ROLE regress_pr_user;
SELECT pgmq.set_priority('pr_q', 5);
SELECT pgmq.clear_priority('pr_q');
RESET ROLE;

-- Cleared: oldest first again, the index gone, sends no longer checked.
SELECT pgmq.clear_priority('pr_q');
SELECT indexrelid::regclass AS index FROM pg_index WHERE indrelid = 'pgmq.q_pr_q'::regclass ORDER BY 1;
SELECT count(*) FROM pgmq.send('pr_q', '{"n": 3}', '{"x-pgmq-priority": 99}'::jsonb);
SELECT message->>'n' AS n FROM pgmq.read('pr_q', 0, 3);
SELECT count(*) AS policy_rows FROM pgmq.policies;

SELECT pgmq.drop_queue('pr_q');
SELECT pgmq.drop_queue('pr_dlq');
REVOKE ALL ON SCHEMA pgmq FROM regress_pr_user;
DROP ROLE regress_pr_user;
