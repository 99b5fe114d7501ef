-- bench/plan_memory.sql: memory one backend spends on cached plans, per
-- queue, when it uses the queues bq_1 .. bq_<nq>: the first half with the
-- hot set of a worker (send, read, delete of the ids read), the second half
-- with every per-message statement. Each statement runs seven times, so the
-- plan cache also builds its generic plans. Prints one line: the 'pgmq plan
-- cache' context before and after (bytes), then per queue for the hot set and
-- for all statements: cached-plan memory and whole-backend growth (which
-- includes the relcache entries of the queue tables); last, the time (ms) a
-- queue's first use in a backend adds to the hot set's (planning, relcache).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.exercise(q text, every boolean) RETURNS int LANGUAGE plpgsql AS $$
DECLARE id bigint;
BEGIN
  FOR k IN 1..7 LOOP
    PERFORM pgmq.send(q, '{"a": 1}');
    PERFORM pgmq.delete(q, ARRAY(SELECT msg_id FROM pgmq.read(q, 30, 1)));
    CONTINUE WHEN NOT every;
    PERFORM pgmq.send_batch(q, ARRAY['{"a": 1}'::jsonb, '{"a": 1}', '{"a": 1}', '{"a": 1}']);
    SELECT msg_id INTO id FROM pgmq.read(q, 30, 1);
    PERFORM pgmq.set_vt(q, id, 0);
    PERFORM pgmq.set_vt(q, ARRAY[id], 0);
    PERFORM pgmq.read(q, 0, 1, '{"a": 1}');
    PERFORM pgmq.delete(q, id);
    PERFORM pgmq.pop(q);
    PERFORM pgmq.archive(q, (SELECT msg_id FROM pgmq.read(q, 30, 1)));
    PERFORM pgmq.archive(q, ARRAY(SELECT msg_id FROM pgmq.read(q, 30, 1)));
    PERFORM pgmq.metrics(q);
  END LOOP;
  RETURN 1;
END $$;
CREATE TEMP VIEW plan_memory AS
SELECT coalesce(sum(total_bytes) FILTER (WHERE name IN ('pgmq plan cache', 'pgmq plans')), 0) AS ctx,
       coalesce(sum(total_bytes) FILTER (WHERE name IN ('pgmq plan cache', 'pgmq plans', 'SPI Plan',
                'CachedPlanSource', 'CachedPlanQuery', 'CachedPlan')), 0) AS plans,
       sum(total_bytes) AS total
FROM pg_backend_memory_contexts;
SELECT :nq / 2 AS half \gset
SELECT ctx AS ctx_before, plans AS plans0, total AS total0, clock_timestamp() AS t0 FROM plan_memory \gset
-- One transaction per queue: a thousand tables in one would exhaust the lock table.
\o /dev/null
SELECT format('SELECT pg_temp.exercise(%L, false)', 'bq_' || i) FROM generate_series(1, :half) i \gexec
\o
SELECT plans AS plans1, total AS total1, clock_timestamp() AS t1 FROM plan_memory \gset
-- The same again, warm: the difference is what a queue's first use costs.
\o /dev/null
SELECT format('SELECT pg_temp.exercise(%L, false)', 'bq_' || i) FROM generate_series(1, :half) i \gexec
\o
SELECT clock_timestamp() AS t2 \gset
\o /dev/null
SELECT format('SELECT pg_temp.exercise(%L, true)', 'bq_' || i) FROM generate_series(:half + 1, :nq) i \gexec
\o
SELECT :ctx_before, ctx,
       (:plans1 - :plans0) / :half, (:total1 - :total0) / :half,
       ((plans - :plans1) / (:nq - :half))::bigint, ((total - :total1) / (:nq - :half))::bigint,
       round((extract(epoch FROM (:'t1'::timestamptz - :'t0') - (:'t2'::timestamptz - :'t1')) * 1000 / :half)::numeric, 3)
FROM plan_memory;
