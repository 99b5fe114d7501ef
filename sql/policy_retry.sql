-- policy_retry: retry(queue, msg_id) makes a message visible again after
-- min(base * 2^(read_ct - 1), max) seconds, less up to 10% jitter; without
-- a backoff policy it is an error; the arguments are checked.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT pgmq.create('rt_q');
SELECT s AS id FROM pgmq.send('rt_q', '{"n": 1}') AS s \gset

SELECT * FROM pgmq.retry('rt_q', :id);

SELECT pgmq.set_retry_backoff('rt_q', -1, 10);
SELECT pgmq.set_retry_backoff('rt_q', 10, 5);
SELECT pgmq.set_retry_backoff('rt_q', NULL, 5);
SELECT pgmq.set_retry_backoff('rt_q', 10, 100);

-- read_ct 1: 10 s; 2: 20 s; 3: 40 s; 4: 80 s; 5 and on: capped at 100 s.
CREATE TEMP TABLE delays (read_ct int, seconds float8);
DO $$
DECLARE
    r record;
BEGIN
    FOR i IN 1..6 LOOP
        UPDATE pgmq.q_rt_q SET vt = now() - interval '1 s';
        PERFORM pgmq.read('rt_q', 30, 1);
        SELECT * INTO r FROM pgmq.retry('rt_q', (SELECT min(msg_id) FROM pgmq.q_rt_q));
        INSERT INTO delays VALUES (r.read_ct, EXTRACT(epoch FROM r.vt - clock_timestamp()));
    END LOOP;
END $$;
SELECT read_ct, CASE WHEN read_ct = 1 THEN 10 WHEN read_ct = 2 THEN 20 WHEN read_ct = 3 THEN 40 WHEN read_ct = 4 THEN 80 ELSE 100 END AS backoff,
       seconds BETWEEN 0.9 * CASE WHEN read_ct = 1 THEN 10 WHEN read_ct = 2 THEN 20 WHEN read_ct = 3 THEN 40 WHEN read_ct = 4 THEN 80 ELSE 100 END - 1
                   AND CASE WHEN read_ct = 1 THEN 10 WHEN read_ct = 2 THEN 20 WHEN read_ct = 3 THEN 40 WHEN read_ct = 4 THEN 80 ELSE 100 END
       AS within_jitter
FROM delays ORDER BY read_ct;

-- A message never read counts as read once; an unknown id returns nothing.
SELECT s AS fresh FROM pgmq.send('rt_q', '{"n": 2}') AS s \gset
SELECT read_ct, vt > clock_timestamp() + interval '8 s' AS hidden FROM pgmq.retry('rt_q', :fresh);
SELECT count(*) FROM pgmq.retry('rt_q', -1);
-- A huge read_ct stays at max.
UPDATE pgmq.q_rt_q SET read_ct = 2147483647;
SELECT bool_and(vt <= clock_timestamp() + interval '100 s') AS capped FROM pgmq.retry('rt_q', :fresh);

SELECT queue_name, retry_base_seconds, retry_max_seconds FROM pgmq.list_policies();
SELECT pgmq.clear_retry_backoff('rt_q');
SELECT * FROM pgmq.retry('rt_q', :fresh);
SELECT count(*) AS policies FROM pgmq.policies;
SELECT pgmq.drop_queue('rt_q');
