-- send to one of the queues bq_1 .. bq_<nq> at random (nq: pgbench -D).
\set n random(1, :nq)
SELECT * FROM pgmq.send('bq_' || :n, :payload);
