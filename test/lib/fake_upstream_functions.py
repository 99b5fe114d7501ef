"""test/lib/fake_upstream_functions.py: the message functions of the TEST-ONLY
stand-in for upstream pgmq (test/lib/fake_upstream.py), written here in
PL/pgSQL from our own description of upstream's API (/work/shared/API.md,
in our words), never from upstream's code: send and send_batch with their
overloads, read (with conditional), read_with_poll, delete, archive, set_vt,
metrics, metrics_all, purge_queue and drop_queue. pgmq-relay and
pgmq-console call them against an upstream-shaped install, so they must
behave as the description says, including where upstream is odd:

  - read_with_poll checks its deadline before the first read, so
    max_poll_seconds 0 returns nothing without reading;
  - metrics' queue_visible_length compares vt with now() (the transaction's
    start), and default_partition_length (1.13) is the planner's estimate of
    the default partitions' rows, 0 until they are analyzed;
  - purge_queue counts, then truncates (no lock in between).

functions(r) returns the SQL for a release r (a Release of fake_upstream).
"""


def functions(r):
    out = []
    w = out.append
    # The columns a message function returns, in message_record's order.
    # 1.10.0's own queues lack last_read_at: it is read through a
    # row-to-json lookup, which yields NULL for a missing column.
    rec = ["msg_id", "read_ct", "enqueued_at"] + (["last_read_at"] if r.type_last_read else []) + ["vt", "message"] \
        + (["headers"] if r.has_headers else [])
    ret = ", ".join(
        ("(to_jsonb(m) ->> ''last_read_at'')::timestamptz" if c == "last_read_at" else "m." + c) for c in rec)
    moved = ["msg_id", "vt", "read_ct", "enqueued_at", "message"] + (["headers"] if r.has_headers else []) \
        + (["last_read_at"] if r.create_last_read else [])
    moved_sql = ", ".join(moved)
    w(f"""
CREATE FUNCTION pgmq._stand_in_queue_table(queue_name TEXT) RETURNS TEXT LANGUAGE sql AS $$
    SELECT format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))
$$;
-- ', last_read_at = clock_timestamp()' where the queue table has the column.
CREATE FUNCTION pgmq._stand_in_stamp(qt TEXT) RETURNS TEXT LANGUAGE sql AS $$
    SELECT CASE WHEN EXISTS (SELECT FROM pg_attribute WHERE attrelid = qt::regclass AND attname = 'last_read_at'
                               AND NOT attisdropped)
                THEN ', last_read_at = clock_timestamp()' ELSE '' END
$$;
-- set_vt's body: every overload comes here with ids and an absolute time.
CREATE FUNCTION pgmq._stand_in_set_vt(queue_name TEXT, msg_ids BIGINT[], new_vt TIMESTAMPTZ)
RETURNS SETOF pgmq.message_record LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('UPDATE %s AS m SET vt = $2 WHERE m.msg_id = ANY($1) RETURNING {ret}',
                                pgmq._stand_in_queue_table(queue_name)) USING msg_ids, new_vt;
END $$;
CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_id BIGINT, vt INTEGER) RETURNS SETOF pgmq.message_record
LANGUAGE sql AS $$
    SELECT * FROM pgmq._stand_in_set_vt(queue_name, ARRAY[msg_id], clock_timestamp() + make_interval(secs => vt))
$$;""")
    if r.v >= (1, 8, 0):
        w("""
CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_ids BIGINT[], vt INTEGER) RETURNS SETOF pgmq.message_record
LANGUAGE sql AS $$
    SELECT * FROM pgmq._stand_in_set_vt(queue_name, msg_ids, clock_timestamp() + make_interval(secs => vt))
$$;""")
    if r.type_last_read:
        w("""
CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_id BIGINT, vt TIMESTAMPTZ) RETURNS SETOF pgmq.message_record
LANGUAGE sql AS $$
    SELECT * FROM pgmq._stand_in_set_vt(queue_name, ARRAY[msg_id], vt)
$$;
CREATE FUNCTION pgmq.set_vt(queue_name TEXT, msg_ids BIGINT[], vt TIMESTAMPTZ) RETURNS SETOF pgmq.message_record
LANGUAGE sql AS $$
    SELECT * FROM pgmq._stand_in_set_vt(queue_name, msg_ids, vt)
$$;""")
    w(sends(r))
    conditional = ", conditional JSONB DEFAULT '{}'" if r.has_headers else ""
    filter_sql = ("AND (coalesce($3, ''{}'') = ''{}'' OR message @> $3) " if r.has_headers else "")
    using_cond = ", conditional" if r.has_headers else ""
    w(f"""
CREATE FUNCTION pgmq.read(queue_name TEXT, vt INTEGER, qty INTEGER{conditional})
RETURNS SETOF pgmq.message_record LANGUAGE plpgsql AS $$
DECLARE
    qt TEXT := pgmq._stand_in_queue_table(queue_name);
BEGIN
    RETURN QUERY EXECUTE format('WITH cte AS (SELECT msg_id FROM %s WHERE vt <= clock_timestamp() {filter_sql}'
                                'ORDER BY msg_id LIMIT $1 FOR UPDATE SKIP LOCKED) '
                                'UPDATE %s AS m SET vt = clock_timestamp() + make_interval(secs => $2), '
                                'read_ct = m.read_ct + 1%s FROM cte WHERE m.msg_id = cte.msg_id '
                                'RETURNING {ret}', qt, qt, pgmq._stand_in_stamp(qt))
        USING qty, vt{using_cond};
END $$;

-- The deadline is checked before each attempt, the first included.
CREATE FUNCTION pgmq.read_with_poll(queue_name TEXT, vt INTEGER, qty INTEGER, max_poll_seconds INTEGER DEFAULT 5,
                                    poll_interval_ms INTEGER DEFAULT 100{conditional})
RETURNS SETOF pgmq.message_record LANGUAGE plpgsql AS $$
DECLARE
    stop_at TIMESTAMP := clock_timestamp() + make_interval(secs => max_poll_seconds);
    got BOOLEAN;
    r pgmq.message_record;
BEGIN
    LOOP
        IF clock_timestamp() >= stop_at THEN
            RETURN;
        END IF;
        got := false;
        FOR r IN SELECT * FROM pgmq.read(queue_name, vt, qty{using_cond}) LOOP
            got := true;
            RETURN NEXT r;
        END LOOP;
        IF got THEN
            RETURN;
        END IF;
        PERFORM pg_sleep(poll_interval_ms / 1000.0);
    END LOOP;
END $$;

CREATE FUNCTION pgmq.archive(queue_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('WITH moved AS (DELETE FROM pgmq.%I WHERE msg_id = ANY($1) RETURNING {moved_sql}) '
                                'INSERT INTO pgmq.%I ({moved_sql}) SELECT {moved_sql} FROM moved RETURNING msg_id',
                                pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(queue_name, 'a'))
        USING msg_ids;
END $$;
CREATE FUNCTION pgmq.archive(queue_name TEXT, msg_id BIGINT) RETURNS BOOLEAN LANGUAGE sql AS $$
    SELECT EXISTS (SELECT pgmq.archive(queue_name, ARRAY[msg_id]))
$$;
CREATE FUNCTION pgmq.delete(queue_name TEXT, msg_ids BIGINT[]) RETURNS SETOF BIGINT LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('DELETE FROM %s WHERE msg_id = ANY($1) RETURNING msg_id',
                                pgmq._stand_in_queue_table(queue_name)) USING msg_ids;
END $$;
CREATE FUNCTION pgmq.delete(queue_name TEXT, msg_id BIGINT) RETURNS BOOLEAN LANGUAGE sql AS $$
    SELECT EXISTS (SELECT pgmq.delete(queue_name, ARRAY[msg_id]))
$$;

-- The count is held in an integer, as described; counted, then truncated.
CREATE FUNCTION pgmq.purge_queue(queue_name TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    deleted INTEGER;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s', pgmq._stand_in_queue_table(queue_name)) INTO deleted;
    EXECUTE format('TRUNCATE %s', pgmq._stand_in_queue_table(queue_name));
    RETURN deleted;
END $$;
""")
    w(metrics(r))
    w(drop(r))
    return "\n".join(out)


def sends(r):
    if not r.has_headers:
        return """
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, delay INTEGER DEFAULT 0) RETURNS SETOF BIGINT
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('INSERT INTO %s (vt, message) VALUES ($1, $2) RETURNING msg_id',
                                pgmq._stand_in_queue_table(queue_name))
        USING clock_timestamp() + make_interval(secs => delay), msg;
END $$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], delay INTEGER DEFAULT 0) RETURNS SETOF BIGINT
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('INSERT INTO %s (vt, message) SELECT $1, unnest($2) RETURNING msg_id',
                                pgmq._stand_in_queue_table(queue_name))
        USING clock_timestamp() + make_interval(secs => delay), msgs;
END $$;"""
    validate = ""
    if r.v >= (1, 11, 0):
        validate = """
    IF msgs IS NULL OR cardinality(msgs) = 0 THEN
        RAISE EXCEPTION 'msgs cannot be NULL or empty';
    END IF;
    IF headers IS NOT NULL AND cardinality(headers) <> cardinality(msgs) THEN
        RAISE EXCEPTION 'headers array length (%) must match msgs array length (%)', cardinality(headers),
            cardinality(msgs);
    END IF;"""
    # Every overload comes to the one with headers and an absolute time.
    return f"""
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB, delay TIMESTAMPTZ) RETURNS SETOF BIGINT
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('INSERT INTO %s (vt, message, headers) VALUES ($1, $2, $3) RETURNING msg_id',
                                pgmq._stand_in_queue_table(queue_name)) USING delay, msg, headers;
END $$;
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB) RETURNS SETOF BIGINT LANGUAGE sql AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, clock_timestamp())
$$;
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB) RETURNS SETOF BIGINT LANGUAGE sql AS $$
    SELECT * FROM pgmq.send(queue_name, msg, headers, clock_timestamp())
$$;
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, delay INTEGER) RETURNS SETOF BIGINT LANGUAGE sql AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, clock_timestamp() + make_interval(secs => delay))
$$;
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, delay TIMESTAMPTZ) RETURNS SETOF BIGINT LANGUAGE sql AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, delay)
$$;
CREATE FUNCTION pgmq.send(queue_name TEXT, msg JSONB, headers JSONB, delay INTEGER) RETURNS SETOF BIGINT
LANGUAGE sql AS $$
    SELECT * FROM pgmq.send(queue_name, msg, headers, clock_timestamp() + make_interval(secs => delay))
$$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[], delay TIMESTAMPTZ)
RETURNS SETOF BIGINT LANGUAGE plpgsql AS $$
BEGIN{validate}
    RETURN QUERY EXECUTE format('INSERT INTO %s (vt, message, headers) '
                                'SELECT $1, m, h FROM unnest($2, coalesce($3, ARRAY[]::jsonb[])) AS u (m, h) '
                                'RETURNING msg_id', pgmq._stand_in_queue_table(queue_name))
        USING delay, msgs, headers;
END $$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[]) RETURNS SETOF BIGINT LANGUAGE sql AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], clock_timestamp())
$$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[]) RETURNS SETOF BIGINT
LANGUAGE sql AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, clock_timestamp())
$$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], delay INTEGER) RETURNS SETOF BIGINT
LANGUAGE sql AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], clock_timestamp() + make_interval(secs => delay))
$$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], delay TIMESTAMPTZ) RETURNS SETOF BIGINT
LANGUAGE sql AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], delay)
$$;
CREATE FUNCTION pgmq.send_batch(queue_name TEXT, msgs JSONB[], headers JSONB[], delay INTEGER) RETURNS SETOF BIGINT
LANGUAGE sql AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, clock_timestamp() + make_interval(secs => delay))
$$;"""


def metrics(r):
    visible = ", count(*) FILTER (WHERE vt <= now())" if r.has_headers else ""
    default = ", NULL::bigint" if r.by_default else ""
    # 1.13: the planner's estimate of the default partitions' rows, 0 until
    # they are analyzed; NULL for a queue without a default partition.
    estimate = """
    IF to_regclass(format('pgmq.%I', qt || '_default')) IS NOT NULL THEN
        SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::bigint INTO result.default_partition_length
          FROM pg_class AS c
         WHERE c.oid IN (to_regclass(format('pgmq.%I', qt || '_default')),
                         to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'a') || '_default')));
    END IF;""" if r.by_default else ""
    return f"""
CREATE FUNCTION pgmq.metrics(queue_name TEXT) RETURNS pgmq.metrics_result LANGUAGE plpgsql AS $$
DECLARE
    qt TEXT := pgmq.format_table_name(queue_name, 'q');
    result pgmq.metrics_result;
BEGIN
    EXECUTE format('SELECT $1, count(*), extract(epoch FROM now() - max(enqueued_at))::int, '
                   'extract(epoch FROM now() - min(enqueued_at))::int, '
                   '(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s), now(){visible}{default} '
                   'FROM pgmq.%I', pg_get_serial_sequence(format('pgmq.%I', qt), 'msg_id'), qt)
        INTO result USING queue_name;{estimate}
    RETURN result;
END $$;
CREATE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result LANGUAGE plpgsql AS $$
DECLARE
    name TEXT;
BEGIN
    FOR name IN SELECT queue_name FROM pgmq.meta LOOP
        RETURN NEXT pgmq.metrics(name);
    END LOOP;
END $$;"""


def drop(r):
    lock = "PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_' || queue_name));" if r.v >= (1, 6, 0) else ""
    missing = "RETURN false;" if r.v >= (1, 6, 0) else \
        "RAISE EXCEPTION 'relation \"pgmq.%\" does not exist', pgmq.format_table_name(queue_name, 'q');"
    out = f"""
CREATE FUNCTION pgmq._stand_in_drop(queue_name TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
    partman TEXT := (SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
                      WHERE e.extname = 'pg_partman');
BEGIN
    {lock}
    IF to_regclass(pgmq._stand_in_queue_table(queue_name)) IS NULL THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        {missing}
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', pgmq.format_table_name(queue_name, 'q'));
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', pgmq.format_table_name(queue_name, 'a'));
    DELETE FROM pgmq.meta AS m WHERE m.queue_name = _stand_in_drop.queue_name;
    IF partman IS NOT NULL THEN
        EXECUTE format('DELETE FROM %I.part_config WHERE parent_table IN (%L, %L)', partman,
                       'pgmq.' || pgmq.format_table_name(queue_name, 'q'),
                       'pgmq.' || pgmq.format_table_name(queue_name, 'a'));
    END IF;
    RETURN true;
END $$;
CREATE FUNCTION pgmq.drop_queue(queue_name TEXT, partitioned BOOLEAN) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
    {"RAISE WARNING 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. "
     "Use drop_queue(queue_name) instead'; PERFORM pgmq._stand_in_drop(queue_name); RETURN true;"
     if r.has_headers else "RETURN pgmq._stand_in_drop(queue_name);"}
END $$;"""
    if r.has_headers:
        out += """
CREATE FUNCTION pgmq.drop_queue(queue_name TEXT) RETURNS BOOLEAN LANGUAGE sql AS $$
    SELECT pgmq._stand_in_drop(queue_name)
$$;"""
    return out
