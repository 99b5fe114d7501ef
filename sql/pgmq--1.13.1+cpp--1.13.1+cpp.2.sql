-- Updates pgmq from 1.13.1+cpp to 1.13.1+cpp.2. Queues, messages and
-- policies stay as they are.
\echo Use "ALTER EXTENSION pgmq UPDATE" to load this file. \quit

-- Upstream's result types get upstream's columns back: the pause moves to
-- queue_state.
ALTER TYPE pgmq.queue_record DROP ATTRIBUTE paused;
ALTER TYPE pgmq.metrics_result DROP ATTRIBUTE paused;
CREATE OR REPLACE FUNCTION pgmq.list_queues() RETURNS SETOF pgmq.queue_record
    LANGUAGE sql AS $$
    SELECT m.queue_name, m.is_partitioned, m.is_unlogged, m.created_at FROM pgmq.meta AS m
$$;

-- retention_interval left out (or NULL): one of the interval's kind.
CREATE OR REPLACE FUNCTION pgmq.create_partitioned(
    queue_name TEXT, partition_interval TEXT DEFAULT '10000', retention_interval TEXT DEFAULT NULL,
    premake INTEGER DEFAULT 4) RETURNS void
    AS 'MODULE_PATHNAME', 'pgmq_create_partitioned' LANGUAGE C;

-- Dead letters: a shared dead-letter queue, why a message failed.
CREATE FUNCTION pgmq.redrive_all(dead_letter_queue TEXT) RETURNS TABLE (queue_name TEXT, redriven BIGINT)
    AS 'MODULE_PATHNAME', 'pgmq_redrive_all' LANGUAGE C;

CREATE FUNCTION pgmq.dead_letter(queue_name TEXT, msg_id BIGINT, reason TEXT DEFAULT NULL) RETURNS BOOLEAN
    AS 'MODULE_PATHNAME', 'pgmq_dead_letter' LANGUAGE C;

CREATE FUNCTION pgmq.dead_letter(queue_name TEXT, msg_ids BIGINT[], reason TEXT DEFAULT NULL) RETURNS SETOF BIGINT
    AS 'MODULE_PATHNAME', 'pgmq_dead_letter_batch' LANGUAGE C;

CREATE FUNCTION pgmq.retry(queue_name TEXT, msg_id BIGINT, reason TEXT) RETURNS SETOF pgmq.message_record
    AS 'MODULE_PATHNAME', 'pgmq_retry_reason' LANGUAGE C;

-- What upstream's metrics and list_queues do not say.
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

-- What a queue's table may carry (docs/permissions.md).
CREATE FUNCTION pgmq._table_runs_foreign_code(relation regclass) RETURNS text
    AS 'MODULE_PATHNAME', 'pgmq_table_runs_foreign_code' LANGUAGE C STABLE STRICT;

CREATE FUNCTION pgmq._tables_running_foreign_code(relations regclass[])
    RETURNS TABLE (relation regclass, reason text)
    AS 'MODULE_PATHNAME', 'pgmq_tables_running_foreign_code' LANGUAGE C STABLE STRICT;

-- The function-name guard decides from the catalog after every command.
CREATE OR REPLACE FUNCTION pgmq._guard_function_names() RETURNS event_trigger LANGUAGE plpgsql
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

DROP EVENT TRIGGER IF EXISTS pgmq_guard_function_names;
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
