-- The queue beside stream_steady.sql (bench/streams.sh): send 10, then read
-- 10 and delete them.
SELECT count(*) FROM pgmq.send_batch(:q, array_fill(:payload::jsonb, ARRAY[10]));
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read(:q, 30, 10) \gset
SELECT * FROM pgmq.delete(:q, :ids::bigint[]);
COMMIT;
