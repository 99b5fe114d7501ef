-- One message per transaction with a deduplication id never sent before,
-- to a queue with a deduplication policy (bench/run's policies()).
\set id random(1, 9000000000000000000)
SELECT * FROM pgmq.send(:q, :payload, jsonb_build_object('x-pgmq-deduplication-id', :id::text));
