-- pgmq--1.13.1.sql: the SQL surface of pgmq in C++, API level of upstream
-- pgmq 1.13.1. Schema pgmq comes from pgmq.control (not an extension member,
-- so queue tables survive DROP EXTENSION as upstream's do). Queue tables are
-- created by the functions, never here, so they are not extension members
-- and pg_dump dumps them.
\echo Use "CREATE EXTENSION pgmq" to load this file. \quit

-- One row per queue, the name as the user gave it.
CREATE TABLE pgmq.meta (
    queue_name VARCHAR UNIQUE NOT NULL,
    is_partitioned BOOLEAN NOT NULL,
    is_unlogged BOOLEAN NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL
);

-- Monitoring roles may read queue tables and sequences (metrics); right after
-- meta, as upstream 1.12+, so fresh and upgraded installs dump alike.
GRANT USAGE ON SCHEMA pgmq TO pg_monitor;
GRANT SELECT ON ALL TABLES IN SCHEMA pgmq TO pg_monitor;
GRANT SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO pg_monitor;
ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT SELECT ON TABLES TO pg_monitor;
ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT SELECT ON SEQUENCES TO pg_monitor;

SELECT pg_catalog.pg_extension_config_dump('pgmq.meta', '');

-- Attribute order is API: clients decode these types by position.
CREATE TYPE pgmq.message_record AS (
    msg_id BIGINT,
    read_ct INTEGER,
    enqueued_at TIMESTAMP WITH TIME ZONE,
    last_read_at TIMESTAMP WITH TIME ZONE,
    vt TIMESTAMP WITH TIME ZONE,
    message JSONB,
    headers JSONB
);

CREATE TYPE pgmq.queue_record AS (
    queue_name VARCHAR,
    is_partitioned BOOLEAN,
    is_unlogged BOOLEAN,
    created_at TIMESTAMP WITH TIME ZONE
);

CREATE TYPE pgmq.metrics_result AS (
    queue_name text,
    queue_length bigint,
    newest_msg_age_sec int,
    oldest_msg_age_sec int,
    total_messages bigint,
    scrape_time timestamp with time zone,
    queue_visible_length bigint,
    default_partition_length bigint
);

-------------------------------------------------------------------------------
-- Queue lifecycle
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.create_non_partitioned(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_non_partitioned' LANGUAGE C;

CREATE FUNCTION pgmq."create"(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_non_partitioned' LANGUAGE C;

CREATE FUNCTION pgmq.create_unlogged(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_unlogged' LANGUAGE C;

CREATE FUNCTION pgmq.drop_queue(queue_name TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_drop_queue' LANGUAGE C;

CREATE FUNCTION pgmq.drop_queue(queue_name TEXT, partitioned BOOLEAN) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_drop_queue_deprecated' LANGUAGE C;

CREATE FUNCTION pgmq.purge_queue(queue_name TEXT) RETURNS BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_purge_queue' LANGUAGE C;

CREATE FUNCTION pgmq.detach_archive(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_detach_archive' LANGUAGE C;

CREATE FUNCTION pgmq.validate_queue_name(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_validate_queue_name' LANGUAGE C;

CREATE FUNCTION pgmq.format_table_name(queue_name TEXT, prefix TEXT) RETURNS TEXT
    AS 'MODULE_PATHNAME', 'pgmq_format_table_name' LANGUAGE C IMMUTABLE;

CREATE FUNCTION pgmq.acquire_queue_lock(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_acquire_queue_lock' LANGUAGE C;

CREATE FUNCTION pgmq.list_queues() RETURNS SETOF pgmq.queue_record
    LANGUAGE sql AS $$
    SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta
$$;

-------------------------------------------------------------------------------
-- Sending
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send' LANGUAGE C;

CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_headers' LANGUAGE C;

CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, delay INTEGER) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, delay TIMESTAMP WITH TIME ZONE) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_at' LANGUAGE C;

CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB, delay INTEGER) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_headers_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB, delay TIMESTAMP WITH TIME ZONE) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_headers_at' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_headers' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], delay INTEGER) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], delay TIMESTAMP WITH TIME ZONE) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_at' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[], delay INTEGER) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_headers_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[], delay TIMESTAMP WITH TIME ZONE) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_headers_at' LANGUAGE C;

-------------------------------------------------------------------------------
-- Reading
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.read(queue_name TEXT, vt INTEGER, qty INTEGER, conditional JSONB DEFAULT '{}')
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read' LANGUAGE C;

CREATE FUNCTION pgmq.read_with_poll(
    queue_name TEXT, vt INTEGER, qty INTEGER,
    max_poll_seconds INTEGER DEFAULT 5, poll_interval_ms INTEGER DEFAULT 100, conditional JSONB DEFAULT '{}')
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_with_poll' LANGUAGE C;

CREATE FUNCTION pgmq.pop(queue_name TEXT, qty INTEGER DEFAULT 1) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_pop' LANGUAGE C;

-------------------------------------------------------------------------------
-- Acknowledging and visibility
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.delete(queue_name TEXT, msg_id BIGINT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_delete' LANGUAGE C;

CREATE FUNCTION pgmq.delete(queue_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_delete_batch' LANGUAGE C;

CREATE FUNCTION pgmq.archive(queue_name TEXT, msg_id BIGINT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_archive' LANGUAGE C;

CREATE FUNCTION pgmq.archive(queue_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_archive_batch' LANGUAGE C;

CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_id BIGINT, vt INTEGER) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_set_vt' LANGUAGE C;

CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_id BIGINT, vt TIMESTAMP WITH TIME ZONE) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_set_vt_at' LANGUAGE C;

CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_ids BIGINT[], vt INTEGER) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_set_vt_batch' LANGUAGE C;

CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_ids BIGINT[], vt TIMESTAMP WITH TIME ZONE) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_set_vt_batch_at' LANGUAGE C;

-------------------------------------------------------------------------------
-- Monitoring
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.metrics(queue_name TEXT) RETURNS pgmq.metrics_result
    AS 'MODULE_PATHNAME', 'pgmq_metrics' LANGUAGE C;

CREATE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result
    LANGUAGE sql AS $$
    SELECT m.* FROM pgmq.meta AS q, LATERAL pgmq.metrics(q.queue_name) AS m
$$;

-------------------------------------------------------------------------------
-- Partitioned queues (pg_partman)
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.create_partitioned(
    queue_name TEXT, partition_interval TEXT DEFAULT '10000', retention_interval TEXT DEFAULT '100000',
    premake INTEGER DEFAULT 4) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_partitioned' LANGUAGE C;

-- Not in upstream: how far each premade partition set still reaches.
CREATE FUNCTION pgmq.partition_status(queue_name TEXT)
    RETURNS TABLE(queue_name TEXT, parent_table TEXT, partition_column TEXT, partition_interval TEXT,
                  premake INTEGER, current_position TEXT, premade_until TEXT,
                  runway_messages BIGINT, runway_time INTERVAL, default_partition_rows BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_partition_status' LANGUAGE C;

-------------------------------------------------------------------------------
-- Access control (not in upstream): grants for one queue, see docs/permissions.md
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.grant_queue_access(queue_name TEXT, role_name TEXT, archive BOOLEAN DEFAULT true)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_grant_queue_access' LANGUAGE C;
