-- A consumer group reads 10 messages of a stream, then acknowledges them, in
-- one transaction (the stream's side of read_delete.sql, which it runs
-- beside: its own variable names, :s and :g, so one pgbench run takes both).
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read_stream(:s, :g, 30, 10) \gset
SELECT count(*) FROM pgmq.ack(:s, :g, :ids::bigint[]);
COMMIT;
