-- One ~100-byte message per transaction. Variables (pgbench -D) travel as
-- parameters under -M prepared, as a client library sends them.
SELECT * FROM pgmq.send(:q, :payload);
