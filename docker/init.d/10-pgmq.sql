-- docker/init.d/10-pgmq.sql: run once, on the first start of the image, in
-- database postgres (the database pg_partman_bgw.dbname names in
-- docker/postgresql.conf, so the background worker maintains the
-- partitioned queues created here).
-- pg_partman goes into its own schema, as its documentation recommends;
-- pgmq finds it wherever it is installed.
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
CREATE EXTENSION IF NOT EXISTS pgmq;
