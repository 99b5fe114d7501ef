-- Updates pgmq from 1.13.1+cpp.2 to 1.13.1+cpp.3: streams and consumer groups
-- (docs/streams.md). Queues, messages and policies stay as they are.
\echo Use "ALTER EXTENSION pgmq UPDATE" to load this file. \quit

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

