-- pgmq--1.13.1+cpp.sql: the SQL surface of pgmq in C++, API level of upstream
-- pgmq 1.13.1. Schema pgmq comes from pgmq.control (not an extension member,
-- so queue tables survive DROP EXTENSION as upstream's do). Queue tables are
-- created by the functions, never here, so they are not extension members
-- and pg_dump dumps them.
-- The update scripts that switch from upstream pgmq run this file's body too,
-- after sql/switch/prologue.sql has moved the old objects aside (Makefile.pgxs).
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

-- Every queue owner writes meta (create inserts its queue's row, drop_queue
-- deletes it), but only its own queues' rows: a row may be written when its
-- name is a valid queue name and the current role has the privileges of the
-- owner of that queue's table pgmq.q_<name> (docs/permissions.md). Anyone
-- with SELECT reads every row. Superusers and meta's owner bypass the
-- policies, so pg_dump and pg_restore by an administrator see every row.
CREATE FUNCTION pgmq._is_queue_owner(queue_name TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_is_queue_owner' LANGUAGE C STABLE STRICT;

ALTER TABLE pgmq.meta ENABLE ROW LEVEL SECURITY;
CREATE POLICY meta_select ON pgmq.meta FOR SELECT USING (true);
CREATE POLICY meta_insert_own_queue ON pgmq.meta FOR INSERT
    WITH CHECK (pgmq._is_queue_owner(queue_name));
CREATE POLICY meta_update_own_queue ON pgmq.meta FOR UPDATE
    USING (pgmq._is_queue_owner(queue_name)) WITH CHECK (pgmq._is_queue_owner(queue_name));
CREATE POLICY meta_delete_own_queue ON pgmq.meta FOR DELETE
    USING (pgmq._is_queue_owner(queue_name));

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
    SELECT m.queue_name, m.is_partitioned, m.is_unlogged, m.created_at FROM pgmq.meta AS m
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

-- Not in upstream (docs/api.md): one read over several queues, taking from
-- them in turn so that a busy queue cannot starve the others.
CREATE FUNCTION pgmq.read_multi(queue_names TEXT[], vt INTEGER, qty INTEGER)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT, read_ct INTEGER, enqueued_at TIMESTAMP WITH TIME ZONE,
                   vt TIMESTAMP WITH TIME ZONE, message JSONB, headers JSONB)
    AS 'MODULE_PATHNAME', 'pgmq_read_multi' LANGUAGE C;

CREATE FUNCTION pgmq.read_multi_with_poll(
    queue_names TEXT[], vt INTEGER, qty INTEGER, max_poll_seconds INTEGER DEFAULT 5,
    poll_interval_ms INTEGER DEFAULT 100)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT, read_ct INTEGER, enqueued_at TIMESTAMP WITH TIME ZONE,
                   vt TIMESTAMP WITH TIME ZONE, message JSONB, headers JSONB)
    AS 'MODULE_PATHNAME', 'pgmq_read_multi_with_poll' LANGUAGE C;

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

-- Not in upstream (docs/api.md): messages back from the archive, visible
-- now, with their ids; and messages to another queue, with new ids there.
CREATE FUNCTION pgmq.unarchive(queue_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_unarchive' LANGUAGE C;

CREATE FUNCTION pgmq.move(source TEXT, target TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_move' LANGUAGE C;

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
-- Not in upstream: messages in msg_id order, visible or not, neither leased
-- nor counted as read; SELECT only, and it answers on a hot standby.
CREATE FUNCTION pgmq.peek(queue_name TEXT, qty INTEGER DEFAULT 10, after_msg_id BIGINT DEFAULT 0)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_peek' LANGUAGE C;

CREATE FUNCTION pgmq.metrics(queue_name TEXT) RETURNS pgmq.metrics_result
    AS 'MODULE_PATHNAME', 'pgmq_metrics' LANGUAGE C;

-- In C: SQL calling pgmq.metrics(q.queue_name) would run any exact-match
-- overload that a role with CREATE on schema pgmq adds, as the caller.
CREATE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result
    AS 'MODULE_PATHNAME', 'pgmq_metrics_all' LANGUAGE C;

-------------------------------------------------------------------------------
-- Partitioned queues (pg_partman)
-------------------------------------------------------------------------------
-- retention_interval left out (or NULL): one of the interval's kind, upstream's
-- '100000' for id intervals up to 10000, else ten intervals.
CREATE FUNCTION pgmq.create_partitioned(
    queue_name TEXT, partition_interval TEXT DEFAULT '10000', retention_interval TEXT DEFAULT NULL,
    premake INTEGER DEFAULT 4) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_partitioned' LANGUAGE C;

-- Not in upstream: how far each premade partition set still reaches, and
-- for how many seconds at the current send rate (runway_seconds).
CREATE FUNCTION pgmq.partition_status(queue_name TEXT)
    RETURNS TABLE(queue_name TEXT, parent_table TEXT, partition_column TEXT, partition_interval TEXT,
                  premake INTEGER, current_position TEXT, premade_until TEXT,
                  runway_messages BIGINT, runway_time INTERVAL, default_partition_rows BIGINT,
                  runway_seconds DOUBLE PRECISION)
    AS 'MODULE_PATHNAME', 'pgmq_partition_status' LANGUAGE C;

-- Upstream's conversion of an archive, keeping its rows (upstream leaves them
-- in a_<name>_old); leading_partition is ignored, as upstream does.
CREATE FUNCTION pgmq.convert_archive_partitioned(
    table_name TEXT, partition_interval TEXT DEFAULT '10000', retention_interval TEXT DEFAULT '100000',
    leading_partition INTEGER DEFAULT 10) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_convert_archive_partitioned' LANGUAGE C;

-- Not in upstream: pg_partman maintenance table by table (one overrun queue
-- does not stop the others), premaking and retention from each queue's
-- sequence; the pgmq background worker runs the same (pgmq.maintenance_*).
CREATE PROCEDURE pgmq.run_partition_maintenance(queue_name TEXT DEFAULT NULL)
    AS 'MODULE_PATHNAME', 'pgmq_run_partition_maintenance' LANGUAGE C;

-- Not in upstream: the recovery of an overrun queue and its archive; commits
-- as it goes, so CALL it outside a transaction block.
CREATE PROCEDURE pgmq.recover_partitioned_queue(queue_name TEXT)
    AS 'MODULE_PATHNAME', 'pgmq_recover_partitioned_queue' LANGUAGE C;

-------------------------------------------------------------------------------
-- Access control (not in upstream): grants for one queue, see docs/permissions.md
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.grant_queue_access(queue_name TEXT, role_name TEXT, archive BOOLEAN DEFAULT true)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_grant_queue_access' LANGUAGE C;

-------------------------------------------------------------------------------
-- FIFO message groups (header x-pgmq-group), see docs/fifo.md
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.read_grouped(queue_name TEXT, vt INTEGER, qty INTEGER)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped' LANGUAGE C;

CREATE FUNCTION pgmq.read_grouped_with_poll(
    queue_name TEXT, vt INTEGER, qty INTEGER, max_poll_seconds INTEGER DEFAULT 5, poll_interval_ms INTEGER DEFAULT 100)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped_with_poll' LANGUAGE C;

CREATE FUNCTION pgmq.read_grouped_rr(queue_name TEXT, vt INTEGER, qty INTEGER)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped_rr' LANGUAGE C;

CREATE FUNCTION pgmq.read_grouped_rr_with_poll(
    queue_name TEXT, vt INTEGER, qty INTEGER, max_poll_seconds INTEGER DEFAULT 5, poll_interval_ms INTEGER DEFAULT 100)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped_rr_with_poll' LANGUAGE C;

CREATE FUNCTION pgmq.read_grouped_head(queue_name TEXT, vt INTEGER, qty INTEGER)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped_head' LANGUAGE C;

CREATE FUNCTION pgmq.read_grouped_head_with_poll(
    queue_name TEXT, vt INTEGER, qty INTEGER, max_poll_seconds INTEGER DEFAULT 5, poll_interval_ms INTEGER DEFAULT 100)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_grouped_head_with_poll' LANGUAGE C;

-- Upstream builds a GIN index on headers under this name; ours is the btree
-- on (group key, msg_id) the group reads walk.
CREATE FUNCTION pgmq.create_fifo_index(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_fifo_index' LANGUAGE C;

CREATE FUNCTION pgmq._create_fifo_index_if_not_exists(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_fifo_index' LANGUAGE C;

CREATE FUNCTION pgmq.create_fifo_indexes_all() RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_fifo_indexes_all' LANGUAGE C;

-------------------------------------------------------------------------------
-- Insert notifications (LISTEN "pgmq.q_<queue name>.INSERT"), see docs/notify.md
-------------------------------------------------------------------------------
-- One row per queue with notifications on; UNLOGGED as upstream (after a
-- crash the throttle state simply restarts).
CREATE UNLOGGED TABLE pgmq.notify_insert_throttle (
    queue_name VARCHAR UNIQUE NOT NULL
        CONSTRAINT notify_insert_throttle_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    throttle_interval_ms INTEGER NOT NULL DEFAULT 0,
    last_notified_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT pg_catalog.to_timestamp(0)
);

CREATE INDEX idx_notify_throttle_active
    ON pgmq.notify_insert_throttle (queue_name, last_notified_at)
    WHERE throttle_interval_ms OPERATOR(pg_catalog.>) 0;

SELECT pg_catalog.pg_extension_config_dump('pgmq.notify_insert_throttle', '');

CREATE FUNCTION pgmq.notify_queue_listeners() RETURNS TRIGGER
    AS 'MODULE_PATHNAME', 'pgmq_notify_queue_listeners' LANGUAGE C;

CREATE FUNCTION pgmq.enable_notify_insert(queue_name TEXT, throttle_interval_ms INTEGER DEFAULT 250) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_enable_notify_insert' LANGUAGE C;

CREATE FUNCTION pgmq.disable_notify_insert(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_disable_notify_insert' LANGUAGE C;

CREATE FUNCTION pgmq.update_notify_insert(queue_name TEXT, throttle_interval_ms INTEGER) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_update_notify_insert' LANGUAGE C;

CREATE FUNCTION pgmq.list_notify_insert_throttles()
    RETURNS TABLE (queue_name TEXT, throttle_interval_ms INTEGER, last_notified_at TIMESTAMP WITH TIME ZONE)
    LANGUAGE sql STABLE AS $$
    SELECT t.queue_name::pg_catalog.text, t.throttle_interval_ms, t.last_notified_at
    FROM pgmq.notify_insert_throttle AS t ORDER BY t.queue_name
$$;

-------------------------------------------------------------------------------
-- Topic routing (AMQP-style: * one segment, # zero or more), see docs/topics.md
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq.validate_routing_key(routing_key TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_validate_routing_key' LANGUAGE C IMMUTABLE;

CREATE FUNCTION pgmq.validate_topic_pattern(pattern TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_validate_topic_pattern' LANGUAGE C IMMUTABLE;

-- Not in upstream (which inlines the same rule in SQL): the regular
-- expression a pattern compiles to, from the C++ core.
CREATE FUNCTION pgmq._topic_pattern_regex(pattern TEXT) RETURNS TEXT
    AS 'MODULE_PATHNAME', 'pgmq_topic_pattern_regex' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TABLE pgmq.topic_bindings (
    pattern TEXT NOT NULL,
    queue_name TEXT NOT NULL
        CONSTRAINT topic_bindings_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    bound_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL,
    compiled_regex TEXT GENERATED ALWAYS AS (pgmq._topic_pattern_regex(pattern)) STORED,
    CONSTRAINT topic_bindings_unique_pattern_queue UNIQUE (pattern, queue_name)
);

-- Routing reads pattern, queue and regex of every binding: index-only.
CREATE INDEX idx_topic_bindings_covering ON pgmq.topic_bindings (pattern) INCLUDE (queue_name, compiled_regex);

SELECT pg_catalog.pg_extension_config_dump('pgmq.topic_bindings', '');

-- Where an administrator lets queue owners manage their own bindings (GRANT
-- INSERT, DELETE ON pgmq.topic_bindings), each reaches only the bindings of
-- the queues it owns. The table's owner and superusers bypass this.
ALTER TABLE pgmq.topic_bindings ENABLE ROW LEVEL SECURITY;
CREATE POLICY topic_bindings_select ON pgmq.topic_bindings FOR SELECT USING (true);
CREATE POLICY topic_bindings_insert_own_queue ON pgmq.topic_bindings FOR INSERT
    WITH CHECK (pgmq._is_queue_owner(queue_name));
CREATE POLICY topic_bindings_update_own_queue ON pgmq.topic_bindings FOR UPDATE
    USING (pgmq._is_queue_owner(queue_name)) WITH CHECK (pgmq._is_queue_owner(queue_name));
CREATE POLICY topic_bindings_delete_own_queue ON pgmq.topic_bindings FOR DELETE
    USING (pgmq._is_queue_owner(queue_name));

CREATE FUNCTION pgmq.bind_topic(pattern TEXT, queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_bind_topic' LANGUAGE C;

CREATE FUNCTION pgmq.unbind_topic(pattern TEXT, queue_name TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_unbind_topic' LANGUAGE C;

CREATE FUNCTION pgmq.list_topic_bindings()
    RETURNS TABLE (pattern TEXT, queue_name TEXT, bound_at TIMESTAMP WITH TIME ZONE, compiled_regex TEXT)
    LANGUAGE sql STABLE AS $$
    SELECT b.pattern, b.queue_name, b.bound_at, b.compiled_regex
    FROM pgmq.topic_bindings AS b ORDER BY b.bound_at DESC, b.pattern, b.queue_name
$$;

CREATE FUNCTION pgmq.list_topic_bindings(queue_name TEXT)
    RETURNS TABLE (pattern TEXT, queue_name TEXT, bound_at TIMESTAMP WITH TIME ZONE, compiled_regex TEXT)
    LANGUAGE sql STABLE AS $$
    SELECT b.pattern, b.queue_name, b.bound_at, b.compiled_regex
    FROM pgmq.topic_bindings AS b WHERE b.queue_name OPERATOR(pg_catalog.=) $1
    ORDER BY b.bound_at DESC, b.pattern
$$;

-- Validates first (an invalid key is an error even with no bindings).
CREATE FUNCTION pgmq.test_routing(routing_key TEXT)
    RETURNS TABLE (pattern TEXT, queue_name TEXT, compiled_regex TEXT)
    LANGUAGE sql STABLE AS $$
    SELECT pgmq.validate_routing_key($1);
    SELECT b.pattern, b.queue_name, b.compiled_regex
    FROM pgmq.topic_bindings AS b WHERE $1 OPERATOR(pg_catalog.~) b.compiled_regex ORDER BY b.pattern
$$;

CREATE FUNCTION pgmq.send_topic(routing_key TEXT, msg JSONB) RETURNS INTEGER
    AS 'MODULE_PATHNAME', 'pgmq_send_topic' LANGUAGE C;

CREATE FUNCTION pgmq.send_topic(routing_key TEXT, msg JSONB, delay INTEGER) RETURNS INTEGER
    AS 'MODULE_PATHNAME', 'pgmq_send_topic_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_topic(routing_key TEXT, msg JSONB, headers JSONB, delay INTEGER) RETURNS INTEGER
    AS 'MODULE_PATHNAME', 'pgmq_send_topic_headers_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[])
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[], headers JSONB[])
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic_headers' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[], delay INTEGER)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[], delay TIMESTAMP WITH TIME ZONE)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic_at' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[], headers JSONB[], delay INTEGER)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic_headers_delay' LANGUAGE C;

CREATE FUNCTION pgmq.send_batch_topic(routing_key TEXT, msgs JSONB[], headers JSONB[], delay TIMESTAMP WITH TIME ZONE)
    RETURNS TABLE (queue_name TEXT, msg_id BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_topic_headers_at' LANGUAGE C;

-------------------------------------------------------------------------------
-- Upstream's internal helpers, kept for callers that use them (API.md §1.3)
-------------------------------------------------------------------------------
CREATE FUNCTION pgmq._extension_exists(extension_name TEXT) RETURNS BOOLEAN
    LANGUAGE sql AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) $1)
$$;

-- Whether a relation of this name is a member of the pgmq extension (queue
-- tables have not been since 1.6.0).
CREATE FUNCTION pgmq._belongs_to_pgmq(table_name TEXT) RETURNS BOOLEAN
    LANGUAGE sql AS $$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_depend AS d
        JOIN pg_catalog.pg_extension AS e ON d.refobjid OPERATOR(pg_catalog.=) e.oid
        JOIN pg_catalog.pg_class AS c ON d.objid OPERATOR(pg_catalog.=) c.oid
        WHERE e.extname OPERATOR(pg_catalog.=) 'pgmq'
          AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
          AND c.relname OPERATOR(pg_catalog.=) $1)
$$;

CREATE FUNCTION pgmq._ensure_pg_partman_installed() RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_ensure_pg_partman_installed' LANGUAGE C;

CREATE FUNCTION pgmq._get_partition_col(partition_interval TEXT) RETURNS TEXT
    AS 'MODULE_PATHNAME', 'pgmq_get_partition_col' LANGUAGE C;

CREATE FUNCTION pgmq._get_pg_partman_schema() RETURNS TEXT
    AS 'MODULE_PATHNAME', 'pgmq_get_pg_partman_schema' LANGUAGE C;

CREATE FUNCTION pgmq._get_pg_partman_major_version() RETURNS INTEGER
    AS 'MODULE_PATHNAME', 'pgmq_get_pg_partman_major_version' LANGUAGE C;

CREATE FUNCTION pgmq._validate_batch_params(msgs JSONB[], headers JSONB[]) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_validate_batch_params' LANGUAGE C;

-- send_batch's insert; here it validates too (the checks cost nothing).
CREATE FUNCTION pgmq._send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[], delay TIMESTAMP WITH TIME ZONE)
    RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_send_batch_headers_at' LANGUAGE C;

-------------------------------------------------------------------------------
-- Delivery policies (not in upstream), see docs/delivery.md
-------------------------------------------------------------------------------
-- One row per queue with a policy, under the queue's name as pgmq.meta has
-- it, pinned to the queue's table (queue_relid) and to its dead-letter
-- queue's (dead_letter_relid): a row that outlives its table (dropped with
-- DROP TABLE) is never used for another table of that name, and create
-- removes it. Removed with the queue (the meta row's delete cascades); a
-- dead-letter queue that is dropped stops being one (SET NULL). Readers and
-- senders read it (once per backend and queue, cached until the row or the
-- queue table changes), so everyone may SELECT; only a queue's owner writes
-- its row, with tables that are the current ones, and a dead-letter queue it
-- may send to (checked again where the row is used).
CREATE TABLE pgmq.policies (
    queue_name VARCHAR PRIMARY KEY
        CONSTRAINT policies_meta_queue_name_fk REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    queue_relid REGCLASS NOT NULL,
    dead_letter_queue VARCHAR
        CONSTRAINT policies_dead_letter_queue_fk REFERENCES pgmq.meta (queue_name) ON DELETE SET NULL,
    dead_letter_relid REGCLASS,
    max_deliveries INTEGER CHECK (max_deliveries OPERATOR(pg_catalog.>) 0),
    retry_base_seconds INTEGER CHECK (retry_base_seconds OPERATOR(pg_catalog.>=) 0),
    retry_max_seconds INTEGER CHECK (retry_max_seconds OPERATOR(pg_catalog.>=) retry_base_seconds),
    deduplication_window INTERVAL,
    retention_max_age INTERVAL,
    retention_archive_max_age INTERVAL,
    priority_levels INTEGER CHECK (priority_levels OPERATOR(pg_catalog.>=) 2
                                   AND priority_levels OPERATOR(pg_catalog.<=) 10),
    paused_at TIMESTAMP WITH TIME ZONE,  -- pgmq.pause: reads return nothing until pgmq.resume
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL
);

CREATE INDEX policies_dlq_idx ON pgmq.policies (dead_letter_queue);

SELECT pg_catalog.pg_extension_config_dump('pgmq.policies', '');

-- Whether the current role may write this policy row: it has the privileges
-- of the owner of pgmq.q_<queue_name>, whose OID is queue_relid, and, when
-- the row names a dead-letter queue, may insert into pgmq.q_<dead letter
-- queue>, whose OID is dead_letter_relid.
CREATE FUNCTION pgmq._policy_row_allowed(queue_name TEXT, queue_relid REGCLASS, dead_letter_queue TEXT,
                                         dead_letter_relid REGCLASS) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_policy_row_allowed' LANGUAGE C STABLE;

ALTER TABLE pgmq.policies ENABLE ROW LEVEL SECURITY;
CREATE POLICY policies_select ON pgmq.policies FOR SELECT USING (true);
CREATE POLICY policies_insert_own_queue ON pgmq.policies FOR INSERT
    WITH CHECK (pgmq._policy_row_allowed(queue_name, queue_relid, dead_letter_queue, dead_letter_relid));
CREATE POLICY policies_update_own_queue ON pgmq.policies FOR UPDATE
    USING (pgmq._is_queue_owner(queue_name))
    WITH CHECK (pgmq._policy_row_allowed(queue_name, queue_relid, dead_letter_queue, dead_letter_relid));
CREATE POLICY policies_delete_own_queue ON pgmq.policies FOR DELETE
    USING (pgmq._is_queue_owner(queue_name));
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.policies TO PUBLIC;

-- Any change of a policy row (also a direct UPDATE, the SET NULL when a
-- dead-letter queue is dropped, a restore) makes every backend read the
-- queue's policy again once it commits (a relcache invalidation of the
-- queue table).
CREATE FUNCTION pgmq._invalidate_queue_policy() RETURNS TRIGGER
    AS 'MODULE_PATHNAME', 'pgmq_invalidate_queue_policy' LANGUAGE C;
CREATE TRIGGER policies_invalidate AFTER INSERT OR UPDATE OR DELETE ON pgmq.policies
    FOR EACH ROW EXECUTE FUNCTION pgmq._invalidate_queue_policy();

-- Whether the current role may send to the queue (INSERT on its table):
-- the row-level security of pgmq.deduplication, so a sender of one queue
-- can neither read nor plant another queue's deduplication ids.
CREATE FUNCTION pgmq._may_send(queue_name TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_may_send' LANGUAGE C STABLE STRICT;

-- The deduplication ids sent within each queue's window: the first send of
-- an id inserts its row (the unique key makes a racing second send wait for
-- the first one's transaction and then find its msg_id). Pinned to the queue
-- table (queue_relid): an id a dropped table of the same name left is never
-- found for a new one.
CREATE TABLE pgmq.deduplication (
    queue_name VARCHAR NOT NULL,
    deduplication_id TEXT NOT NULL,
    msg_id BIGINT NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
    queue_relid REGCLASS NOT NULL,
    CONSTRAINT deduplication_pkey PRIMARY KEY (queue_name, deduplication_id)
);

-- For the expiry in maintenance, led by expires_at so that a send never
-- scans it for one id (the primary key finds that).
CREATE INDEX deduplication_expires_idx ON pgmq.deduplication (expires_at, queue_name);

SELECT pg_catalog.pg_extension_config_dump('pgmq.deduplication', '');

ALTER TABLE pgmq.deduplication ENABLE ROW LEVEL SECURITY;
CREATE POLICY deduplication_senders ON pgmq.deduplication FOR ALL
    USING (pgmq._may_send(queue_name)) WITH CHECK (pgmq._may_send(queue_name));
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.deduplication TO PUBLIC;

CREATE FUNCTION pgmq.set_dead_letter_queue(queue_name TEXT, dead_letter_queue TEXT, max_deliveries INTEGER)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_set_dead_letter_queue' LANGUAGE C;

CREATE FUNCTION pgmq.clear_dead_letter_queue(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_clear_dead_letter_queue' LANGUAGE C;

-- Moves the messages dead-lettered from queue_name (their x-pgmq-dead-letter
-- header names it) back to it: a dead-letter queue may be shared.
CREATE FUNCTION pgmq.redrive(dead_letter_queue TEXT, queue_name TEXT, qty INTEGER DEFAULT NULL) RETURNS BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_redrive' LANGUAGE C;

-- Every message of a dead-letter queue back to the queue it came from.
CREATE FUNCTION pgmq.redrive_all(dead_letter_queue TEXT) RETURNS TABLE (queue_name TEXT, redriven BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_redrive_all' LANGUAGE C;

-- A consumer's "this message cannot be processed": to the queue's
-- dead-letter queue now, with a reason (RabbitMQ's reject without requeue).
CREATE FUNCTION pgmq.dead_letter(queue_name TEXT, msg_id BIGINT, reason TEXT DEFAULT NULL) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_dead_letter' LANGUAGE C;

CREATE FUNCTION pgmq.dead_letter(queue_name TEXT, msg_ids BIGINT[], reason TEXT DEFAULT NULL) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_dead_letter_batch' LANGUAGE C;

CREATE FUNCTION pgmq.set_retry_backoff(queue_name TEXT, base_seconds INTEGER, max_seconds INTEGER) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_set_retry_backoff' LANGUAGE C;

CREATE FUNCTION pgmq.clear_retry_backoff(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_clear_retry_backoff' LANGUAGE C;

CREATE FUNCTION pgmq.retry(queue_name TEXT, msg_id BIGINT) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_retry' LANGUAGE C;

-- The same, with why it failed: kept in the message's x-pgmq-failures.
CREATE FUNCTION pgmq.retry(queue_name TEXT, msg_id BIGINT, reason TEXT) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_retry_reason' LANGUAGE C;

CREATE FUNCTION pgmq.set_deduplication(queue_name TEXT, "window" INTERVAL) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_set_deduplication' LANGUAGE C;

CREATE FUNCTION pgmq.clear_deduplication(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_clear_deduplication' LANGUAGE C;

CREATE FUNCTION pgmq.set_retention(queue_name TEXT, max_age INTERVAL, archive_max_age INTERVAL DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_set_retention' LANGUAGE C;

CREATE FUNCTION pgmq.clear_retention(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_clear_retention' LANGUAGE C;

CREATE FUNCTION pgmq.apply_retention(queue_name TEXT) RETURNS BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_apply_retention' LANGUAGE C;

-- Priorities: reads take higher x-pgmq-priority first. set_priority builds
-- the queue table's priority index, clear_priority drops it.
CREATE FUNCTION pgmq.set_priority(queue_name TEXT, levels INTEGER) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_set_priority' LANGUAGE C;

CREATE FUNCTION pgmq.clear_priority(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_clear_priority' LANGUAGE C;

-- Pause and resume (docs/delivery.md): while a queue is paused, sends are
-- accepted and every read returns nothing. Its owner's, as its policies.
CREATE FUNCTION pgmq.pause(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_pause' LANGUAGE C;

CREATE FUNCTION pgmq.resume(queue_name TEXT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_resume' LANGUAGE C;

-- Every queue's policies, with how many of its messages wait in its
-- dead-letter queue now (NULL when the caller may not read that queue).
CREATE FUNCTION pgmq.list_policies()
    RETURNS TABLE (queue_name TEXT, dead_letter_queue TEXT, max_deliveries INTEGER, dead_lettered BIGINT,
                   retry_base_seconds INTEGER, retry_max_seconds INTEGER, deduplication_window INTERVAL,
                   retention_max_age INTERVAL, retention_archive_max_age INTERVAL, priority_levels INTEGER)
    AS 'MODULE_PATHNAME', 'pgmq_list_policies' LANGUAGE C;

-- What upstream's metrics and list_queues do not say: whether a queue is
-- paused, its priorities, its dead letters (and which queues dead-letter
-- into it), and its messages split into visible, leased (read, their
-- visibility timeout running) and delayed (sent for later, never read).
-- Counts are NULL where the caller may not read the queue.
CREATE FUNCTION pgmq.queue_state(queue_name TEXT)
    RETURNS TABLE (queue_name TEXT, paused BOOLEAN, paused_at TIMESTAMP WITH TIME ZONE, priority_levels INTEGER,
                   dead_letter_queue TEXT, dead_lettered BIGINT, dead_letter_for TEXT[], visible_length BIGINT,
                   leased_length BIGINT, delayed_length BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_queue_state' LANGUAGE C;

CREATE FUNCTION pgmq.queue_state_all()
    RETURNS TABLE (queue_name TEXT, paused BOOLEAN, paused_at TIMESTAMP WITH TIME ZONE, priority_levels INTEGER,
                   dead_letter_queue TEXT, dead_lettered BIGINT, dead_letter_for TEXT[], visible_length BIGINT,
                   leased_length BIGINT, delayed_length BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_queue_state_all' LANGUAGE C;

-------------------------------------------------------------------------------
-- What a queue's table may carry (docs/permissions.md)
-------------------------------------------------------------------------------
-- pgmq refuses (42501) to run a statement on a queue or archive table that
-- would run another role's code with the caller's rights: a function,
-- type, operator class, access method, foreign server or other table that
-- is neither built in nor pgmq's, or an expression calling a function that
-- is not immutable. These answer the same question for programs that read
-- queue tables themselves (pgmq-console), for the current user: NULL (no
-- row) when it may, else what the table carries and what that does. They
-- lock each table the user may read (ACCESS SHARE, partitions too) until
-- the end of the transaction, so a later statement in it reads what was
-- checked.
CREATE FUNCTION pgmq._table_runs_foreign_code(relation regclass) RETURNS text
    AS 'MODULE_PATHNAME', 'pgmq_table_runs_foreign_code' LANGUAGE C STABLE STRICT;

CREATE FUNCTION pgmq._tables_running_foreign_code(relations regclass[])
    RETURNS TABLE (relation regclass, reason text)
    AS 'MODULE_PATHNAME', 'pgmq_tables_running_foreign_code' LANGUAGE C STABLE STRICT;

-------------------------------------------------------------------------------
-- Streams and consumer groups (not in upstream), see docs/streams.md
-------------------------------------------------------------------------------
-- A stream is a queue (a meta row, pgmq.q_<name>) whose table has one more
-- column, xid: the sending transaction's id (pg_current_xact_id()), by which
-- it is range-partitioned. Messages are only ever inserted; storage goes by
-- truncating whole partitions (maintenance) once every group has passed them
-- and the retention allows, or at max_retention regardless.
CREATE TABLE pgmq.streams (
    stream_name VARCHAR PRIMARY KEY
        CONSTRAINT streams_meta_queue_name_fk REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    stream_relid REGCLASS NOT NULL,
    retention INTERVAL NOT NULL CHECK (retention OPERATOR(pg_catalog.>=) '0'::INTERVAL),
    max_retention INTERVAL NOT NULL CHECK (max_retention OPERATOR(pg_catalog.>=) retention),
    partitions_made BIGINT DEFAULT 0 NOT NULL,   -- names q_<name>_p<n>
    partition_xids BIGINT DEFAULT 10000 NOT NULL,  -- width of the next partition (adapted to the rate)
    partitioned_at TIMESTAMP WITH TIME ZONE,     -- when, and at which next xid, the last was made
    partitioned_xid XID8,
    created_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('pgmq.streams', '');

-- One row per consumer group: its cursor and its leases, updated once per
-- batch read and once per acknowledgement (fillfactor: the updates are HOT).
-- The cursor is a window of transactions: those visible in window_end and
-- not in window_start, read in (xid, msg_id) order up to position; floors
-- (from seek or subscribe) apply to the window cut right after them. Leases:
-- [{"b": batch, "ids": [msg_id...], "vt": epoch seconds, "n": deliveries}].
CREATE TABLE pgmq.consumer_groups (
    stream_name VARCHAR NOT NULL
        CONSTRAINT consumer_groups_stream_fk REFERENCES pgmq.streams (stream_name) ON DELETE CASCADE,
    group_name VARCHAR NOT NULL CHECK (pg_catalog.length(group_name) OPERATOR(pg_catalog.<=) 63),
    window_start PG_SNAPSHOT NOT NULL,
    window_end PG_SNAPSHOT NOT NULL,
    position_xid XID8,
    position_id BIGINT,
    floor_id BIGINT,
    floor_time TIMESTAMP WITH TIME ZONE,
    leases JSONB DEFAULT '[]' NOT NULL,
    next_batch BIGINT DEFAULT 1 NOT NULL,
    ordered BOOLEAN DEFAULT false NOT NULL,
    dead_letter_queue VARCHAR
        CONSTRAINT consumer_groups_dead_letter_queue_fk REFERENCES pgmq.meta (queue_name) ON DELETE SET NULL,
    max_deliveries INTEGER CHECK (max_deliveries OPERATOR(pg_catalog.>) 0),
    subscribed_at TIMESTAMP WITH TIME ZONE DEFAULT pg_catalog.now() NOT NULL,
    last_read_at TIMESTAMP WITH TIME ZONE,
    last_ack_at TIMESTAMP WITH TIME ZONE,
    reader_role NAME,
    PRIMARY KEY (stream_name, group_name)
) WITH (fillfactor = 50);
CREATE INDEX consumer_groups_dlq_idx ON pgmq.consumer_groups (dead_letter_queue);
SELECT pg_catalog.pg_extension_config_dump('pgmq.consumer_groups', '');

-- Whether the current role may read stream_name as a consumer group whose
-- reader is reader_role: SELECT on the stream's table, and (unless
-- reader_role is NULL: any of its readers) the privileges of reader_role or
-- the stream's ownership. Readers move their group's cursor and leases.
CREATE FUNCTION pgmq._may_read_as(stream_name TEXT, reader_role NAME) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_may_read_as' LANGUAGE C STABLE;

-- Only a stream's owner makes it, subscribes and unsubscribes groups (and
-- names a dead-letter queue only if it may send to it); whoever may read the
-- stream reads as its groups (those with a reader_role: with that role's
-- privileges). Readers update a group's cursor and leases only: its name,
-- stream and options change through pgmq.subscribe alone.
ALTER TABLE pgmq.streams ENABLE ROW LEVEL SECURITY;
CREATE POLICY streams_select ON pgmq.streams FOR SELECT USING (true);
CREATE POLICY streams_write_own ON pgmq.streams FOR ALL
    USING (pgmq._is_queue_owner(stream_name)) WITH CHECK (pgmq._is_queue_owner(stream_name));
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.streams TO PUBLIC;
ALTER TABLE pgmq.consumer_groups ENABLE ROW LEVEL SECURITY;
CREATE POLICY consumer_groups_select ON pgmq.consumer_groups FOR SELECT USING (true);
CREATE POLICY consumer_groups_insert_own ON pgmq.consumer_groups FOR INSERT
    WITH CHECK (pgmq._is_queue_owner(stream_name)
                AND (dead_letter_queue IS NULL OR pgmq._may_send(dead_letter_queue)));
CREATE POLICY consumer_groups_update_readers ON pgmq.consumer_groups FOR UPDATE
    USING (pgmq._may_read_as(stream_name, reader_role))
    WITH CHECK (pgmq._may_read_as(stream_name, reader_role));
CREATE POLICY consumer_groups_delete_own ON pgmq.consumer_groups FOR DELETE
    USING (pgmq._is_queue_owner(stream_name));
GRANT SELECT, INSERT, DELETE ON pgmq.consumer_groups TO PUBLIC;
GRANT UPDATE (window_start, window_end, position_xid, position_id, floor_id, floor_time, leases, next_batch,
              last_read_at, last_ack_at) ON pgmq.consumer_groups TO PUBLIC;

CREATE FUNCTION pgmq.create_stream(stream_name TEXT, retention INTERVAL DEFAULT '1 day',
                                   max_retention INTERVAL DEFAULT '7 days') RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_stream' LANGUAGE C;

CREATE FUNCTION pgmq.subscribe(stream_name TEXT, group_name TEXT, since TIMESTAMP WITH TIME ZONE DEFAULT NULL,
                               ordered BOOLEAN DEFAULT false, dead_letter_queue TEXT DEFAULT NULL,
                               max_deliveries INTEGER DEFAULT NULL, reader REGROLE DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_subscribe' LANGUAGE C;

CREATE FUNCTION pgmq.unsubscribe(stream_name TEXT, group_name TEXT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_unsubscribe' LANGUAGE C;

CREATE FUNCTION pgmq.read_stream(stream_name TEXT, group_name TEXT, vt INTEGER, qty INTEGER)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_stream' LANGUAGE C;

CREATE FUNCTION pgmq.read_stream_with_poll(stream_name TEXT, group_name TEXT, vt INTEGER, qty INTEGER,
                                           max_poll_seconds INTEGER DEFAULT 5, poll_interval_ms INTEGER DEFAULT 100)
    RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_read_stream_with_poll' LANGUAGE C;

CREATE FUNCTION pgmq.ack(stream_name TEXT, group_name TEXT, msg_id BIGINT) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_ack' LANGUAGE C;

CREATE FUNCTION pgmq.ack(stream_name TEXT, group_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_ack_ids' LANGUAGE C;

CREATE FUNCTION pgmq.set_aside(stream_name TEXT, group_name TEXT, msg_id BIGINT, reason TEXT DEFAULT NULL)
    RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_set_aside' LANGUAGE C;

CREATE FUNCTION pgmq.release(stream_name TEXT, group_name TEXT, msg_id BIGINT, delay_seconds INTEGER DEFAULT 0)
    RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_release' LANGUAGE C;

CREATE FUNCTION pgmq.seek(stream_name TEXT, group_name TEXT, since TIMESTAMP WITH TIME ZONE) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_seek_time' LANGUAGE C;

CREATE FUNCTION pgmq.seek(stream_name TEXT, group_name TEXT, msg_id BIGINT) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_seek_id' LANGUAGE C;

CREATE FUNCTION pgmq.stream_groups(stream_name TEXT DEFAULT NULL)
    RETURNS TABLE (stream_name TEXT, group_name TEXT, pending BIGINT, in_flight BIGINT,
                   oldest_pending_at TIMESTAMP WITH TIME ZONE, last_read_at TIMESTAMP WITH TIME ZONE,
                   last_ack_at TIMESTAMP WITH TIME ZONE, held_bytes BIGINT, ordered BOOLEAN,
                   dead_letter_queue TEXT, max_deliveries INTEGER, subscribed_at TIMESTAMP WITH TIME ZONE)
    AS 'MODULE_PATHNAME', 'pgmq_stream_groups' LANGUAGE C;

CREATE FUNCTION pgmq.stream_partitions(stream_name TEXT)
    RETURNS TABLE (partition_name TEXT, from_xid XID8, to_xid XID8, is_default BOOLEAN, bytes BIGINT,
                   newest_at TIMESTAMP WITH TIME ZONE)
    AS 'MODULE_PATHNAME', 'pgmq_stream_partitions' LANGUAGE C;

-------------------------------------------------------------------------------
-- Function names of pgmq are pgmq's (docs/permissions.md)
-------------------------------------------------------------------------------
-- Queue owners have CREATE on schema pgmq. A function they add under one of
-- pgmq's names (say read(text, int, int), or send(text, text)) would make
-- everyone's calls of pgmq.read ambiguous, or resolve unknown-typed
-- arguments to their function instead of pgmq's, running their code as the
-- caller. So schema pgmq may hold a function named like one of pgmq's only
-- when it is pgmq's own (a member of the extension) or made by roles with
-- the privileges of the schema's owner (who installed pgmq, or a superuser
-- who switched another role's install): its owner, and the owner of the
-- type it was made for (a range type's constructors belong to the bootstrap
-- superuser) or of the extension whose script made it (a trusted extension's
-- objects too). The catalog decides, after every command, whatever made the
-- function: CREATE FUNCTION, CREATE TYPE, ALTER ... RENAME or SET SCHEMA,
-- CREATE EXTENSION. Roles with those privileges are not stopped. An event
-- trigger needs a superuser to create it: an installation by another role
-- goes without (and says so). It runs after every DDL command of the
-- database (a tag filter let CREATE TYPE and CREATE EXTENSION through), so
-- it is one catalog query over pgmq's own function names: about 0.4 ms a
-- command on a 2-core machine.
CREATE FUNCTION pgmq._guard_function_names() RETURNS event_trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
DECLARE
    taken regprocedure;
    taken_name name;
    taken_owner name;
BEGIN
    -- pgmq's names that schema pgmq holds more functions under than pgmq's
    -- own (usually none: one probe of the name index per name), then which
    -- of those functions is not pgmq's, and whose it is.
    WITH own AS MATERIALIZED (
        SELECT e.oid AS extension, n.oid AS namespace, n.nspowner, f.proname, count(*) AS members
        FROM pg_extension AS e
        JOIN pg_namespace AS n ON n.nspname = 'pgmq'
        JOIN pg_depend AS m ON m.refclassid = 'pg_extension'::regclass AND m.refobjid = e.oid
                           AND m.classid = 'pg_proc'::regclass AND m.deptype = 'e'
        JOIN pg_proc AS f ON f.oid = m.objid AND f.pronamespace = n.oid
        WHERE e.extname = 'pgmq'
        GROUP BY 1, 2, 3, 4
    ), crowded AS MATERIALIZED (
        SELECT * FROM own AS w
        WHERE (SELECT count(*) FROM pg_proc AS q WHERE q.proname = w.proname AND q.pronamespace = w.namespace)
              > w.members
    )
    SELECT p.oid, p.proname, pg_get_userbyid(o.role) INTO taken, taken_name, taken_owner
    FROM crowded AS w
    JOIN pg_proc AS p ON p.proname = w.proname AND p.pronamespace = w.namespace
    CROSS JOIN LATERAL (
        SELECT p.proowner AS role
        UNION ALL
        SELECT CASE d.refclassid WHEN 'pg_extension'::regclass THEN x.extowner ELSE t.typowner END
        FROM pg_depend AS d
        LEFT JOIN pg_extension AS x ON d.refclassid = 'pg_extension'::regclass AND x.oid = d.refobjid
        LEFT JOIN pg_type AS t ON d.refclassid = 'pg_type'::regclass AND t.oid = d.refobjid
        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype IN ('e', 'i')
    ) AS o
    WHERE NOT pg_has_role(current_user, w.nspowner, 'USAGE')
      AND NOT pg_has_role(o.role, w.nspowner, 'USAGE')
      AND NOT EXISTS (SELECT FROM pg_depend AS d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                        AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = w.extension AND d.deptype = 'e')
    LIMIT 1;
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to create function pgmq.%: the name is pgmq''s', taken_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('Schema pgmq holds %s, made by role %s, which is not pgmq''s. Only roles with the '
                                  'privileges of the owner of schema pgmq may add functions named like pgmq''s to '
                                  'it, however they are made: they would change what calls of pgmq.%s run.',
                                  taken, taken_owner, taken_name),
                  HINT = 'Create it in a schema of your own, or have an administrator drop it.';
    END IF;
END $$;

DO $$
BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user) THEN
        -- No tag filter: CREATE TYPE, ALTER ... SET SCHEMA and CREATE
        -- EXTENSION make functions too.
        CREATE EVENT TRIGGER pgmq_guard_function_names ON ddl_command_end
            EXECUTE FUNCTION pgmq._guard_function_names();
    ELSE
        RAISE WARNING 'pgmq was installed by a role that is not a superuser: other roles with CREATE on schema pgmq '
                      'can add functions under pgmq''s names'
            USING HINT = 'Install pgmq as a superuser where queue owners share schema pgmq (docs/permissions.md).';
    END IF;
END $$;
