SELECT * FROM up.send(:q, :payload);
BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM up.read(:q, 30, 1) \gset
SELECT * FROM up.delete(:q, :ids::bigint[]);
COMMIT;
