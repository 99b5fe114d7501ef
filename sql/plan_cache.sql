-- The per-backend plan cache keeps at most pgmq.plan_cache_size prepared
-- statements; evicted ones are freed when the transaction ends, and a queue
-- whose plan was evicted keeps working (it is prepared again).
SELECT count(*) AS created FROM (SELECT pgmq.create('pc_' || i) FROM generate_series(1, 5) AS i) AS c;
-- pgmq statements this backend holds prepared for the pc_ queues (from
-- PostgreSQL 18 this function's own query is a cached plan too: not counted).
CREATE FUNCTION pg_temp.prepared_pc() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM pg_backend_memory_contexts
     WHERE name = 'CachedPlanSource' AND ident LIKE '%pgmq."q_pc_%'
       AND ident NOT LIKE '%pg_backend_memory_contexts%'
$$;
SET pgmq.plan_cache_size = 3;
-- Inside one transaction nothing is freed yet, and every queue still works.
BEGIN;
SELECT count(*) AS sent FROM (SELECT pgmq.send('pc_' || i, '{"n": 1}') FROM generate_series(1, 5) AS i) AS s;
SELECT count(*) AS read FROM (SELECT pgmq.read('pc_' || i, 0, 1) FROM generate_series(1, 5) AS i) AS r;
COMMIT;
-- After the transaction, exactly three stay prepared.
SELECT pg_temp.prepared_pc();
-- Cycling through more queues than the cache holds keeps working.
SELECT count(*) AS sent FROM (SELECT pgmq.send('pc_' || i, '{"n": 2}') FROM generate_series(1, 5) AS i, generate_series(1, 3)) AS s;
SELECT pg_temp.prepared_pc();
-- With the default size every queue's send, read and the read's refresh of the
-- queue head (head_hint.hpp) stay prepared.
RESET pgmq.plan_cache_size;
SELECT count(*) AS sent FROM (SELECT pgmq.send('pc_' || i, '{"n": 3}') FROM generate_series(1, 5) AS i) AS s;
SELECT count(*) AS read FROM (SELECT pgmq.read('pc_' || i, 0, 1) FROM generate_series(1, 5) AS i) AS r;
SELECT pg_temp.prepared_pc();
SELECT queue_name, queue_length FROM pgmq.metrics_all() WHERE queue_name LIKE 'pc\_%' ORDER BY queue_name;
SELECT count(*) AS dropped FROM (SELECT pgmq.drop_queue('pc_' || i) FROM generate_series(1, 5) AS i) AS d;
