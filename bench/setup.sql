-- bench/setup.sql: the benchmark database. The pgmq queue "bq"; in schema
-- base, a baseline table pair of the identical shape and indexes (the DDL of
-- src/core/ddl.cpp), which the *_base.sql scripts use with plain SQL; in
-- schema up, upstream's layout and logic (upstream_logic.sql, *_up.sql).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgmq;
SELECT pgmq.drop_queue('bq') FROM pgmq.meta WHERE queue_name = 'bq';
SELECT pgmq.create('bq');
DROP SCHEMA IF EXISTS base CASCADE;
CREATE SCHEMA base;
CREATE TABLE base.q_bq (msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    last_read_at TIMESTAMP WITH TIME ZONE,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message jsonb,
    headers jsonb) WITH (fillfactor = 80);
CREATE TABLE base.a_bq (msg_id BIGINT PRIMARY KEY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    last_read_at TIMESTAMP WITH TIME ZONE,
    archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message jsonb,
    headers jsonb);
CREATE INDEX archived_at_idx_bq ON base.a_bq (archived_at);
-- Delivery policies (the policies() cases of bench/run): the dead-letter
-- queue of bq, and the baseline's own deduplication table and dead-letter
-- table, of the same shape and indexes as pgmq's.
SELECT pgmq.drop_queue('bq_dead') FROM pgmq.meta WHERE queue_name = 'bq_dead';
SELECT pgmq.create('bq_dead');
CREATE TABLE base.q_bq_dead (LIKE base.q_bq INCLUDING ALL);
CREATE TABLE base.deduplication (queue_name VARCHAR NOT NULL, deduplication_id TEXT NOT NULL, msg_id BIGINT NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL, PRIMARY KEY (queue_name, deduplication_id));
CREATE INDEX ON base.deduplication (expires_at, queue_name);
\ir upstream_logic.sql
