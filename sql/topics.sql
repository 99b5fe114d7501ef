-- topics: AMQP-style topic routing (API.md §2.14). A binding (pattern, queue)
-- routes every message sent to a matching routing key into the queue; `*`
-- matches exactly one dot-separated segment, `#` zero or more. Validation
-- rules, their order and messages are upstream's. msg_ids are relative to
-- the first id of each part. Last, upstream's internal helpers (§1.3).
\pset null '<NULL>'

-------------------------------------------------------------------------------
-- The bindings table: generated compiled_regex, unique (pattern, queue),
-- covering index, FK to meta with ON DELETE CASCADE, dumped by pg_dump.
-------------------------------------------------------------------------------
SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull, attgenerated
  FROM pg_attribute WHERE attrelid = 'pgmq.topic_bindings'::regclass AND attnum > 0 ORDER BY attnum;
-- (NOT NULL constraints, listed here from PostgreSQL 18, are left out.)
SELECT conname, contype, confdeltype FROM pg_constraint
 WHERE conrelid = 'pgmq.topic_bindings'::regclass AND contype <> 'n' ORDER BY 1;
SELECT pg_get_indexdef('pgmq.idx_topic_bindings_covering'::regclass);
SELECT 'pgmq.topic_bindings'::regclass = ANY (extconfig) AS dumped FROM pg_extension WHERE extname = 'pgmq';

-------------------------------------------------------------------------------
-- validate_routing_key: true, or the first rule broken, in upstream's order.
-------------------------------------------------------------------------------
SELECT k, pgmq.validate_routing_key(k)
  FROM unnest(ARRAY['logs.error', 'app.user-service.auth', 'system_events.db.connection_failed', 'A', '0-9_x']) AS k;
SELECT pgmq.validate_routing_key(repeat('a', 255));
SELECT pgmq.validate_routing_key(NULL);
SELECT pgmq.validate_routing_key('');
SELECT pgmq.validate_routing_key(repeat('a', 256));
-- 300 characters of two bytes each: the length is counted in characters.
SELECT pgmq.validate_routing_key(repeat('é', 300));
SELECT pgmq.validate_routing_key('logs.error!');
SELECT pgmq.validate_routing_key('logs error');
SELECT pgmq.validate_routing_key('logs.*');
SELECT pgmq.validate_routing_key('logs.#');
SELECT pgmq.validate_routing_key('.logs.error');
SELECT pgmq.validate_routing_key('logs.error.');
SELECT pgmq.validate_routing_key('logs..error');
SELECT pgmq.validate_routing_key('.a.');
SELECT pgmq.validate_routing_key('a..b.');

-------------------------------------------------------------------------------
-- validate_topic_pattern: the same rules with * and # allowed, then no **,
-- no ##, no *# or #*.
-------------------------------------------------------------------------------
SELECT p, pgmq.validate_topic_pattern(p)
  FROM unnest(ARRAY['logs.*', 'logs.#', '*.error', '#.error', 'app.*.#', '#', '*', 'a*b', 'logs.error']) AS p;
SELECT pgmq.validate_topic_pattern(NULL);
SELECT pgmq.validate_topic_pattern('');
SELECT pgmq.validate_topic_pattern(repeat('#', 256));
SELECT pgmq.validate_topic_pattern('logs.error!');
SELECT pgmq.validate_topic_pattern('.logs.*');
SELECT pgmq.validate_topic_pattern('logs.*.');
SELECT pgmq.validate_topic_pattern('logs..error');
SELECT pgmq.validate_topic_pattern('logs.**');
SELECT pgmq.validate_topic_pattern('logs.##');
SELECT pgmq.validate_topic_pattern('logs.*#');
SELECT pgmq.validate_topic_pattern('logs.#*');
SELECT pgmq.validate_topic_pattern('.**');
SELECT pgmq.validate_topic_pattern('**.##');
-- Immutable, as upstream's.
SELECT proname, provolatile FROM pg_proc WHERE pronamespace = 'pgmq'::regnamespace
   AND proname IN ('validate_routing_key', 'validate_topic_pattern') ORDER BY 1;

-------------------------------------------------------------------------------
-- bind_topic / unbind_topic / list_topic_bindings
-------------------------------------------------------------------------------
SELECT pgmq.create('topic_logs');
SELECT pgmq.create('topic_errors');
SELECT pgmq.create('Topic_All');
SELECT pgmq.bind_topic('logs.*', 'topic_logs');
SELECT pgmq.bind_topic('logs.#', 'topic_logs');
SELECT pgmq.bind_topic('#.error', 'topic_errors');
SELECT pgmq.bind_topic('*.*.error', 'topic_errors');
SELECT pgmq.bind_topic('#', 'Topic_All');
-- Binding twice is a no-op.
SELECT pgmq.bind_topic('#', 'Topic_All');
SELECT count(*) AS bindings FROM pgmq.topic_bindings;
-- Newest binding first, then by pattern; compiled_regex is upstream's.
SELECT pattern, queue_name, compiled_regex, bound_at <= now() AS bound FROM pgmq.list_topic_bindings();
SELECT pattern, queue_name, compiled_regex FROM pgmq.list_topic_bindings('topic_errors');
SELECT count(*) FROM pgmq.list_topic_bindings('no_such_queue');
-- Errors: the pattern first, then the queue (checked in meta with its exact
-- spelling).
SELECT pgmq.bind_topic('logs..x', 'topic_logs');
SELECT pgmq.bind_topic(NULL, 'topic_logs');
SELECT pgmq.bind_topic('logs.x', NULL);
SELECT pgmq.bind_topic('logs.x', '');
SELECT pgmq.bind_topic('logs.x', 'no_such_queue');
SELECT pgmq.bind_topic('logs.x', 'topic_all');
-- unbind_topic: true when a binding went away.
SELECT pgmq.bind_topic('tmp.*', 'topic_logs');
SELECT pgmq.unbind_topic('tmp.*', 'topic_logs');
SELECT pgmq.unbind_topic('tmp.*', 'topic_logs');
SELECT pgmq.unbind_topic('tmp.*', 'no_such_queue');
SELECT pgmq.unbind_topic(NULL, 'topic_logs');
SELECT pgmq.unbind_topic('', 'topic_logs');
SELECT pgmq.unbind_topic('tmp.*', NULL);
SELECT pgmq.unbind_topic('tmp.*', '');

-------------------------------------------------------------------------------
-- test_routing: the bindings a key matches, by pattern; the key is validated
-- first.
-------------------------------------------------------------------------------
SELECT pattern, queue_name FROM pgmq.test_routing('logs.info') ORDER BY pattern, queue_name;
SELECT pattern, queue_name FROM pgmq.test_routing('logs.api.error') ORDER BY pattern, queue_name;
SELECT pattern, queue_name FROM pgmq.test_routing('db.error') ORDER BY pattern, queue_name;
-- logs.# needs "logs." and more; #.error needs a dot before error.
SELECT pattern, queue_name FROM pgmq.test_routing('logs') ORDER BY pattern, queue_name;
SELECT pattern, queue_name FROM pgmq.test_routing('error') ORDER BY pattern, queue_name;
SELECT * FROM pgmq.test_routing('logs..info');
SELECT * FROM pgmq.test_routing(NULL);

-------------------------------------------------------------------------------
-- send_topic: one message to each distinct matching queue; the count.
-------------------------------------------------------------------------------
-- logs.error matches logs.*, logs.# (both topic_logs: one message), #.error
-- and # : three queues.
SELECT pgmq.send_topic('logs.error', '{"event": "e1"}');
SELECT queue, q.message, q.headers, q.vt <= clock_timestamp() AS visible
  FROM (SELECT 'topic_logs' AS queue, * FROM pgmq.q_topic_logs
        UNION ALL SELECT 'topic_errors', * FROM pgmq.q_topic_errors
        UNION ALL SELECT 'Topic_All', * FROM pgmq.q_topic_all) AS q ORDER BY queue;
-- Only the catch-all matches.
SELECT pgmq.send_topic('metrics', '{"event": "m1"}');
-- With a delay: invisible for that many seconds.
SELECT pgmq.send_topic('app.db.error', '{"event": "e2"}', 60);
SELECT message, vt > clock_timestamp() + interval '59 seconds' AS delayed FROM pgmq.q_topic_errors ORDER BY msg_id;
-- With headers and a delay.
SELECT pgmq.send_topic('logs.audit', '{"event": "a1"}', '{"trace": "t-1"}', 0);
SELECT message, headers FROM pgmq.q_topic_logs ORDER BY msg_id;
-- No matching binding: nothing sent, 0.
SELECT pgmq.unbind_topic('#', 'Topic_All');
SELECT pgmq.send_topic('metrics', '{"event": "m2"}');
-- Errors, in upstream's order: key, msg, delay.
SELECT pgmq.send_topic('bad key', NULL, -1);
SELECT pgmq.send_topic('logs.error', NULL, -1);
SELECT pgmq.send_topic('logs.error', '{}', -1);
SELECT pgmq.send_topic('logs.error', '{}', NULL);
SELECT pgmq.send_topic(NULL, '{}');
-- A delay of 0 is allowed.
SELECT pgmq.send_topic('logs.error', '{}', 0) AS with_delay_0;
SELECT pg_get_function_identity_arguments(oid) AS overloads FROM pg_proc
 WHERE pronamespace = 'pgmq'::regnamespace AND proname = 'send_topic' ORDER BY 1;
SELECT pgmq.purge_queue('topic_logs') + pgmq.purge_queue('topic_errors') + pgmq.purge_queue('Topic_All') AS purged;

-------------------------------------------------------------------------------
-- send_batch_topic: every message to every matching queue, one row per
-- (queue, message): queues by name, messages in array order (n is the row's
-- position in the result, id the msg_id relative to the queue's first one
-- in the result). Topic_All's ids are shown relative to :first.
-------------------------------------------------------------------------------
SELECT pgmq.bind_topic('#', 'Topic_All');
SELECT pgmq.send('Topic_All', '{}') AS first \gset
SELECT pgmq.delete('Topic_All', :first::bigint);
SELECT n, queue_name, msg_id - min(msg_id) OVER (PARTITION BY queue_name) AS id
  FROM pgmq.send_batch_topic('logs.error', ARRAY['{"b": 1}', '{"b": 2}']::jsonb[]) WITH ORDINALITY AS t(queue_name, msg_id, n)
 ORDER BY n;
SELECT n, queue_name, msg_id - min(msg_id) OVER (PARTITION BY queue_name) AS id
  FROM pgmq.send_batch_topic('db.error', ARRAY['{"b": 3}', '{"b": 4}']::jsonb[],
                             ARRAY['{"h": 3}', '{"h": 4}']::jsonb[]) WITH ORDINALITY AS t(queue_name, msg_id, n)
 ORDER BY n;
SELECT queue_name, msg_id - :first AS id FROM pgmq.send_batch_topic('metrics', ARRAY['{"b": 5}']::jsonb[], 60);
SELECT queue_name, msg_id - :first AS id
  FROM pgmq.send_batch_topic('metrics', ARRAY['{"b": 6}']::jsonb[], clock_timestamp() + interval '1 hour');
SELECT queue_name, msg_id - :first AS id
  FROM pgmq.send_batch_topic('metrics', ARRAY['{"b": 7}']::jsonb[], ARRAY['{"h": 7}']::jsonb[], 0);
SELECT queue_name, msg_id - :first AS id
  FROM pgmq.send_batch_topic('metrics', ARRAY['{"b": 8}']::jsonb[], ARRAY['{"h": 8}']::jsonb[], '2000-01-01 00:00:00+00'::timestamptz);
SELECT msg_id - :first AS id, message, headers, vt > clock_timestamp() AS invisible FROM pgmq.q_topic_all ORDER BY msg_id;
SELECT queue_name, msg_id - :first AS id FROM pgmq.send_batch_topic('nobody.listens.here', ARRAY['{}']::jsonb[]);
-- Errors: the key, then the batch (upstream's send_batch messages).
SELECT pgmq.unbind_topic('#', 'Topic_All');
SELECT * FROM pgmq.send_batch_topic('bad key', NULL);
SELECT * FROM pgmq.send_batch_topic('logs.error', NULL);
SELECT * FROM pgmq.send_batch_topic('logs.error', ARRAY[]::jsonb[]);
SELECT * FROM pgmq.send_batch_topic('logs.error', ARRAY['{}', '{}']::jsonb[], ARRAY['{}']::jsonb[]);
SELECT * FROM pgmq.send_batch_topic('logs.error', ARRAY['{}']::jsonb[], ARRAY[]::jsonb[]);
SELECT * FROM pgmq.send_batch_topic('logs.error', ARRAY['{}']::jsonb[], NULL::integer);
SELECT pg_get_function_identity_arguments(oid) AS overloads, pg_get_function_result(oid) AS result FROM pg_proc
 WHERE pronamespace = 'pgmq'::regnamespace AND proname = 'send_batch_topic' ORDER BY 1;

-------------------------------------------------------------------------------
-- drop_queue removes the queue's bindings (ON DELETE CASCADE from meta).
-------------------------------------------------------------------------------
SELECT queue_name, count(*) FROM pgmq.topic_bindings GROUP BY 1 ORDER BY 1;
SELECT pgmq.drop_queue('topic_errors');
SELECT queue_name, count(*) FROM pgmq.topic_bindings GROUP BY 1 ORDER BY 1;
SELECT pgmq.send_topic('logs.error', '{}');
SELECT pgmq.drop_queue('topic_logs');
SELECT pgmq.drop_queue('Topic_All');
SELECT count(*) AS bindings FROM pgmq.topic_bindings;

-------------------------------------------------------------------------------
-- Upstream's internal helpers (API.md §1.3).
-------------------------------------------------------------------------------
SELECT pgmq.create('helpers_q');
SELECT pgmq._validate_batch_params(ARRAY['{}']::jsonb[], NULL);
SELECT pgmq._validate_batch_params(ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[]);
SELECT pgmq._validate_batch_params(NULL, NULL);
SELECT pgmq._validate_batch_params(ARRAY['{}', '{}']::jsonb[], ARRAY[]::jsonb[]);
SELECT count(*) FROM pgmq._send_batch('helpers_q', ARRAY['{"a": 1}', '{"a": 2}']::jsonb[], NULL, clock_timestamp());
SELECT message, headers FROM pgmq.q_helpers_q ORDER BY msg_id;
SELECT pgmq._extension_exists('pgmq') AS pgmq, pgmq._extension_exists('no_such_extension') AS other;
-- meta is an extension member; queue tables are not (since 1.6.0).
SELECT pgmq._belongs_to_pgmq('meta') AS meta, pgmq._belongs_to_pgmq('q_helpers_q') AS queue_table,
       pgmq._belongs_to_pgmq('no_such_table') AS missing;
-- The partition column create_partitioned would use: msg_id for an int4.
SELECT i AS partition_interval, pgmq._get_partition_col(i)
  FROM unnest(ARRAY['10000', ' 42 ', '+7', '-3', '2147483647', '2147483648', '1e3', '1 day', '10 seconds', 'daily', '']) AS i;
-- The pg_partman lookups agree with pg_extension, whether or not it is installed.
SELECT pgmq._get_pg_partman_schema() IS NOT DISTINCT FROM
         (SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
           WHERE e.extname = 'pg_partman') AS schema_agrees,
       pgmq._get_pg_partman_major_version() IS NOT DISTINCT FROM
         (SELECT split_part(extversion, '.', 1)::int FROM pg_extension WHERE extname = 'pg_partman') AS version_agrees;
DO $$
DECLARE
    ensured boolean;
BEGIN
    BEGIN
        PERFORM pgmq._ensure_pg_partman_installed();
        ensured := true;
    EXCEPTION WHEN object_not_in_prerequisite_state THEN
        ensured := false;
    END;
    IF ensured IS DISTINCT FROM pgmq._extension_exists('pg_partman') THEN
        RAISE EXCEPTION '_ensure_pg_partman_installed disagrees with pg_extension';
    END IF;
END
$$;
SELECT pgmq.drop_queue('helpers_q');
