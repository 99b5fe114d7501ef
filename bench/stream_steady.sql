-- Steady load on a stream (bench/streams.sh): send 10, then a consumer
-- group reads 10 and acknowledges them, so the group keeps up.
SELECT count(*) FROM pgmq.send_batch(:s, array_fill(:payload::jsonb, ARRAY[10]));
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read_stream(:s, :g, 30, 10) \gset
SELECT count(*) FROM pgmq.ack(:s, :g, :ids::bigint[]);
COMMIT;
