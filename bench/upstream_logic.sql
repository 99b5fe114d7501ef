-- bench/upstream_logic.sql: upstream pgmq's way of doing send, read, delete
-- and archive, for comparison: PL/pgSQL functions that build each statement
-- with format() and run it with EXECUTE on every call, on tables of
-- upstream's layout (a vt index, default fillfactor). Written from upstream's
-- documented behaviour for this benchmark; not upstream's code.
DROP SCHEMA IF EXISTS up CASCADE;
CREATE SCHEMA up;
CREATE TABLE up.q_bq (msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    last_read_at TIMESTAMP WITH TIME ZONE,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message jsonb,
    headers jsonb);
CREATE INDEX q_bq_vt_idx ON up.q_bq (vt ASC);
CREATE TABLE up.a_bq (msg_id BIGINT PRIMARY KEY,
    read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    last_read_at TIMESTAMP WITH TIME ZONE,
    archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    vt TIMESTAMP WITH TIME ZONE NOT NULL,
    message jsonb,
    headers jsonb);
CREATE INDEX archived_at_idx_bq ON up.a_bq (archived_at);

CREATE FUNCTION up.send(queue_name text, msg jsonb) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format('INSERT INTO up.%I (vt, message) VALUES (clock_timestamp(), $1) RETURNING msg_id',
                              'q_' || queue_name) USING msg;
END $$;

CREATE FUNCTION up.read(queue_name text, vt integer, qty integer) RETURNS SETOF pgmq.message_record LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'WITH cte AS (SELECT msg_id FROM up.%1$I WHERE vt <= clock_timestamp() ORDER BY msg_id LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE up.%1$I m SET vt = clock_timestamp() + make_interval(secs => $2), read_ct = read_ct + 1,
       last_read_at = clock_timestamp()
     FROM cte WHERE m.msg_id = cte.msg_id
     RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers',
    'q_' || queue_name) USING qty, vt;
END $$;

CREATE FUNCTION up.delete(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format('DELETE FROM up.%I WHERE msg_id = ANY($1) RETURNING msg_id', 'q_' || queue_name)
    USING msg_ids;
END $$;

CREATE FUNCTION up.archive(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'WITH archived AS (DELETE FROM up.%I WHERE msg_id = ANY($1)
       RETURNING msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers)
     INSERT INTO up.%I (msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers)
     SELECT msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers FROM archived RETURNING msg_id',
    'q_' || queue_name, 'a_' || queue_name) USING msg_ids;
END $$;
