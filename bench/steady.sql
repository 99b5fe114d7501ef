-- Steady load (held-snapshot benchmark): send one, read one, delete it.
SELECT * FROM pgmq.send(:q, :payload);
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read(:q, 30, 1) \gset
SELECT * FROM pgmq.delete(:q, :ids::bigint[]);
COMMIT;
