-- Read 10 visible messages, then archive them, in one transaction.
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read(:q, 30, 10) \gset
SELECT * FROM pgmq.archive(:q, :ids::bigint[]);
COMMIT;
