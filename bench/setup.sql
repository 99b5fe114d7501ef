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
\ir upstream_logic.sql
