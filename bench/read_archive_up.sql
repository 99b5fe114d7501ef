BEGIN;
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM up.read(:q, 30, 10) \gset
SELECT * FROM up.archive(:q, :ids::bigint[]);
COMMIT;
