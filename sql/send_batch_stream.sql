-- send_batch streams its ids into the result (src/pg/stream_result.cpp): a
-- batch far larger than work_mem returns every id, once, in insertion order,
-- with the result spilled to disk instead of held in memory. A queue table
-- whose msg_id no longer has the type of send_batch's result is refused with
-- 42804 before any row is returned.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgmq;
SELECT pgmq.create('sbs');
SET work_mem = '64kB';
WITH ids AS (
  SELECT id, ordinality AS n
  FROM pgmq.send_batch('sbs', array_fill('{"a": 1}'::jsonb, ARRAY[20000])) WITH ORDINALITY AS s(id, ordinality)
)
SELECT count(*) AS returned, count(DISTINCT id) AS distinct_ids,
       bool_and(id - (SELECT min(id) FROM ids) = n - 1) AS consecutive_in_order
FROM ids;
SELECT count(*) AS stored FROM pgmq.q_sbs;
RESET work_mem;
-- A batch of headers and a delay go through the same path.
SELECT count(*) AS returned
FROM pgmq.send_batch('sbs', ARRAY['{"b": 1}', '{"b": 2}']::jsonb[], ARRAY['{"h": 1}', '{"h": 2}']::jsonb[], 5);
-- A queue owner changes msg_id's type: no wrong values, no crash, an error
-- (the plan is rebuilt after the ALTER, and the table check names the column).
ALTER TABLE pgmq.q_sbs ALTER COLUMN msg_id TYPE integer;
SET client_min_messages = notice;
DO $$
BEGIN
  PERFORM pgmq.send_batch('sbs', ARRAY['{"c": 1}']::jsonb[]);
EXCEPTION WHEN datatype_mismatch THEN
  RAISE NOTICE '42804: %', SQLERRM;
END $$;
SET client_min_messages = warning;
SELECT pgmq.drop_queue('sbs');
