-- bench/many_queues_memory.sql: the memory (bytes) of one backend, with the
-- default settings, after it sent twice to each of bq_1 .. bq_<nq>: what a
-- producer cycling through many queues holds (cached plans are bounded by
-- pgmq.plan_cache_size; relcache and catcache entries by the queues used).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SELECT set_config('bench.nq', :'nq', false) \gset
DO $$
BEGIN
  FOR round IN 1..2 LOOP
    FOR i IN 1..current_setting('bench.nq')::int LOOP
      PERFORM pgmq.send('bq_' || i, '{"a": 1}');
      COMMIT;  -- a thousand tables in one transaction would exhaust the lock table
    END LOOP;
  END LOOP;
END $$;
SELECT sum(total_bytes) FROM pg_backend_memory_contexts;
