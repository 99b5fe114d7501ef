-- topic_matching: send_topic and send_batch_topic match bindings in C++
-- (core::TopicPatternMatches) instead of compiling each binding's regex on
-- every call. Here they must route exactly where the regex does: for every
-- key, the queues send_topic and send_batch_topic deliver to are those whose
-- compiled_regex matches (test_routing, which still uses the regex). Patterns
-- include ones only a direct INSERT can make (not validated), with regex
-- metacharacters and mixed case. Last, a binding whose stored regex is not its
-- pattern's (the generated column altered) is matched by its stored regex.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgmq;
DO $$
DECLARE
  p text;
  i int := 0;
BEGIN
  FOREACH p IN ARRAY ARRAY['logs.*.error', 'logs.#', '#', '#.error', '*', '*.*', 'a.#.z', 'a*c',
                            'orders.eu.*', 'Orders.EU.#', 'x.y', 'a.b.c.d'] LOOP
    i := i + 1;
    PERFORM pgmq.create('tm_' || i);
    PERFORM pgmq.bind_topic(p, 'tm_' || i);
  END LOOP;
  -- Not valid patterns: only a direct insert makes them.
  FOREACH p IN ARRAY ARRAY['a+b', '(x|y)', 'q[1]', 'a\b', '**', 'x##y', 'dot.', '$^', 'a{2}'] LOOP
    i := i + 1;
    PERFORM pgmq.create('tm_' || i);
    INSERT INTO pgmq.topic_bindings (pattern, queue_name) VALUES (p, 'tm_' || i);
  END LOOP;
END $$;
-- Two bindings to one queue: it gets the message once.
SELECT pgmq.bind_topic('logs.api.*', 'tm_1');

CREATE TEMP TABLE keys AS
SELECT k FROM unnest(ARRAY['logs.api.error', 'logs.error', 'logs.a.b.error', 'logs', 'logs.x',
                           'a.z', 'a.b.z', 'abc', 'ac', 'orders.eu.de', 'Orders.EU.x', 'orders.EU.x',
                           'x.y', 'xxy', 'a.b.c.d', 'a', 'error', 'b.error', 'ab', 'dot', 'a-b_c']) AS k;

-- Per key: the queues the regex routes to, and those send_topic reached.
CREATE TEMP TABLE routed AS
SELECT k,
       (SELECT count(DISTINCT queue_name) FROM pgmq.test_routing(k)) AS by_regex,
       pgmq.send_topic(k, jsonb_build_object('key', k)) AS by_send_topic
FROM keys;
SELECT count(*) AS keys, count(*) FILTER (WHERE by_regex = by_send_topic) AS agree,
       sum(by_send_topic) AS deliveries
FROM routed;
SELECT k, by_regex, by_send_topic FROM routed WHERE by_regex <> by_send_topic;

-- And message by message: each queue holds exactly the keys its binding's
-- regex matches.
WITH expected AS (
  SELECT DISTINCT b.queue_name, k.k FROM keys AS k JOIN pgmq.topic_bindings AS b ON k.k ~ b.compiled_regex
), delivered AS (
  SELECT m.queue_name, x.message->>'key' AS k
  FROM pgmq.meta AS m,
       LATERAL pgmq.read(m.queue_name, 0, 1000) AS x
  WHERE m.queue_name LIKE 'tm\_%'
)
SELECT (SELECT count(*) FROM expected) AS expected,
       (SELECT count(*) FROM delivered) AS delivered,
       (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM delivered) AS missing) AS missing,
       (SELECT count(*) FROM (SELECT * FROM delivered EXCEPT SELECT * FROM expected) AS extra) AS extra;

-- send_batch_topic: one row per message and matching queue, queues in name order.
SELECT queue_name, count(*)
FROM pgmq.send_batch_topic('logs.api.error', ARRAY['{"b": 1}', '{"b": 2}']::jsonb[])
GROUP BY queue_name ORDER BY queue_name;

-- A binding whose stored regex is not its pattern's: its stored regex rules.
BEGIN;
ALTER TABLE pgmq.topic_bindings ALTER COLUMN compiled_regex DROP EXPRESSION;
UPDATE pgmq.topic_bindings SET compiled_regex = '^special$' WHERE queue_name = 'tm_11';
SELECT k, (SELECT count(DISTINCT queue_name) FROM pgmq.test_routing(k)) AS by_regex, pgmq.send_topic(k, '{}') AS by_send_topic
FROM unnest(ARRAY['special', 'x.y']) AS k;
ROLLBACK;

DO $$
DECLARE q text;
BEGIN
  FOR q IN SELECT queue_name FROM pgmq.meta WHERE queue_name LIKE 'tm\_%' LOOP
    PERFORM pgmq.drop_queue(q);
  END LOOP;
END $$;
