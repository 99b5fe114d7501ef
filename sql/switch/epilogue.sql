
-- sql/switch/epilogue.sql: the last part of the update scripts that switch
-- from upstream pgmq (see prologue.sql). The install script's body has
-- created this version's tables, types and functions; now:
--  1. the rows of the old configuration tables go into the new tables of the
--     same name, column by column (a column the new table lacks stops the
--     switch: nothing is dropped silently), and so do the privileges
--     granted on them;
--  2. the insert-notification triggers are re-created with this version's
--     function, given the queue name as created (upstream 1.13.1's form; a
--     trigger from upstream 1.7.x, which had no throttle, gets interval 0);
--  3. upstream's FIFO index (a GIN index on headers, q_<name>_fifo_idx)
--     becomes this version's (a btree on group key and msg_id, same name);
--  4. privileges on queue tables and sequences are what they were (the
--     install script's GRANT ... ON ALL TABLES IN SCHEMA pgmq TO pg_monitor
--     widened them), and so are those on routines of the same signature;
--  5. when a superuser switches an extension that another role created, the
--     schema becomes the superuser's too (its owner could drop any object
--     in it, this version's functions included), and that role keeps what
--     a queue owner needs (docs/permissions.md);
--  6. the old tables and the scratch schema go.

DO $switch$
DECLARE
    r record;
    cols pg_catalog.text;
    lost pg_catalog.text;
    grant_sql pg_catalog.text;
    saved_path pg_catalog.text := pg_catalog.current_setting('search_path');
BEGIN
    -- As in the prologue: nothing a role with CREATE on schema pgmq made.
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    -- 1. meta first: the others reference it.
    FOR r IN
        SELECT c.relname FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace = 'pgmq_switch_scratch'::pg_catalog.regnamespace AND c.relkind IN ('r', 'p')
           AND c.relname !~ '^switch_'
         ORDER BY c.relname <> 'meta', c.relname
    LOOP
        IF pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', r.relname)) IS NULL THEN
            RAISE EXCEPTION 'pgmq.% of the extension being replaced has no counterpart in this version', r.relname;
        END IF;
        SELECT pg_catalog.string_agg(pg_catalog.quote_ident(o.attname), ', ')
          INTO lost
          FROM pg_catalog.pg_attribute AS o
         WHERE o.attrelid = pg_catalog.format('pgmq_switch_scratch.%I', r.relname)::pg_catalog.regclass
           AND o.attnum > 0 AND NOT o.attisdropped
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS n
                            WHERE n.attrelid = pg_catalog.format('pgmq.%I', r.relname)::pg_catalog.regclass
                              AND n.attname = o.attname AND NOT n.attisdropped);
        IF lost IS NOT NULL THEN
            RAISE EXCEPTION 'pgmq.% of the extension being replaced has columns this version lacks: %', r.relname, lost;
        END IF;
        -- Generated columns (topic_bindings.compiled_regex) are computed anew.
        SELECT pg_catalog.string_agg(pg_catalog.quote_ident(n.attname), ', ' ORDER BY n.attnum)
          INTO cols
          FROM pg_catalog.pg_attribute AS n
         WHERE n.attrelid = pg_catalog.format('pgmq.%I', r.relname)::pg_catalog.regclass
           AND n.attnum > 0 AND NOT n.attisdropped AND n.attgenerated = ''
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS o
                        WHERE o.attrelid = pg_catalog.format('pgmq_switch_scratch.%I', r.relname)::pg_catalog.regclass
                          AND o.attname = n.attname AND NOT o.attisdropped);
        EXECUTE pg_catalog.format('INSERT INTO pgmq.%I (%s) SELECT %s FROM pgmq_switch_scratch.%I',
                                  r.relname, cols, cols, r.relname);
        -- The privileges granted on the old table (to applications, say),
        -- except its owner's own.
        FOR grant_sql IN
            SELECT pg_catalog.format('GRANT %s ON pgmq.%I TO %s%s', a.privilege_type, r.relname,
                       CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(g.rolname) END,
                       CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
              FROM pg_catalog.pg_class AS c,
                   pg_catalog.aclexplode(c.relacl) AS a
                   LEFT JOIN pg_catalog.pg_roles AS g ON g.oid = a.grantee
             WHERE c.oid = pg_catalog.format('pgmq_switch_scratch.%I', r.relname)::pg_catalog.regclass
               AND a.grantee <> c.relowner
        LOOP
            EXECUTE grant_sql;
        END LOOP;
    END LOOP;

    -- 2. Insert-notification triggers. The queue is the meta row whose table
    -- the trigger was on (upstream's naming rule); without one, the trigger
    -- gets no argument and this version's function falls back to the table name.
    FOR r IN
        SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS tbl,
               (SELECT m.queue_name::pg_catalog.text FROM pgmq.meta AS m
                 WHERE n.nspname = 'pgmq' AND c.relname = 'q_' || pg_catalog.lower(m.queue_name::pg_catalog.text)
                 LIMIT 1) AS queue_name
          FROM pgmq_switch_scratch.switch_notify_triggers AS t
          JOIN pg_catalog.pg_class AS c ON c.oid = t.queue_table
          JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    LOOP
        -- The same trigger as enable_notify_insert's (src/core/notify.cpp).
        EXECUTE pg_catalog.format(
            'CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON %s '
            'DEFERRABLE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners(%s)',
            r.tbl, COALESCE(pg_catalog.quote_literal(r.queue_name), ''));
        IF r.queue_name IS NOT NULL THEN
            INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms)
            VALUES (r.queue_name, 0) ON CONFLICT DO NOTHING;
        END IF;
    END LOOP;

    -- 3. FIFO indexes. Upstream's GIN index serves none of the group reads here.
    FOR r IN
        SELECT m.queue_name::pg_catalog.text AS queue_name, pg_catalog.format('pgmq.%I', ic.relname) AS idx
          FROM pgmq.meta AS m
          JOIN pg_catalog.pg_class AS c
            ON c.relnamespace = 'pgmq'::pg_catalog.regnamespace
           AND c.relname = 'q_' || pg_catalog.lower(m.queue_name::pg_catalog.text)
          JOIN pg_catalog.pg_index AS i ON i.indrelid = c.oid
          JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
          JOIN pg_catalog.pg_am AS am ON am.oid = ic.relam
         WHERE ic.relname = c.relname || '_fifo_idx' AND am.amname = 'gin'
    LOOP
        EXECUTE pg_catalog.format('DROP INDEX %s', r.idx);
        PERFORM pgmq.create_fifo_index(r.queue_name);
    END LOOP;

    -- 4. Privileges on queue tables, partitions and sequences as they were:
    -- revoke what the install script's GRANT ... ON ALL TABLES/SEQUENCES added.
    FOR r IN
        SELECT pg_catalog.format('REVOKE %s ON %s pgmq.%I FROM %s', a.privilege_type,
                   CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname,
                   CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(g.rolname) END) AS sql
          FROM pgmq_switch_scratch.switch_acls AS s
          JOIN pg_catalog.pg_class AS c ON c.oid = s.rel
          CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) AS a
          LEFT JOIN pg_catalog.pg_roles AS g ON g.oid = a.grantee
         WHERE a.grantee <> c.relowner
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(s.acl) AS o
                            WHERE o.grantee = a.grantee AND o.privilege_type = a.privilege_type)
    LOOP
        EXECUTE r.sql;
    END LOOP;
    -- Routines of the same signature: grants and revocations as they were.
    FOR r IN
        SELECT pg_catalog.format('%s EXECUTE ON ROUTINE pgmq.%I(%s) %s %s%s',
                   CASE WHEN a.kept THEN 'GRANT' ELSE 'REVOKE' END, p.proname, s.args,
                   CASE WHEN a.kept THEN 'TO' ELSE 'FROM' END,
                   CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(g.rolname) END,
                   CASE WHEN a.kept AND a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) AS sql
          FROM pgmq_switch_scratch.switch_routine_acls AS s
          JOIN pg_catalog.pg_proc AS p
            ON p.pronamespace = 'pgmq'::pg_catalog.regnamespace AND p.proname = s.name
           AND pg_catalog.pg_get_function_identity_arguments(p.oid) = s.args
          CROSS JOIN LATERAL (
              SELECT o.grantee, o.is_grantable, true AS kept FROM pg_catalog.aclexplode(s.acl) AS o
               WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(COALESCE(p.proacl,
                                     pg_catalog.acldefault('f', p.proowner))) AS n
                                  WHERE n.grantee = o.grantee AND n.is_grantable = o.is_grantable)
              UNION ALL
              SELECT n.grantee, false, false FROM pg_catalog.aclexplode(COALESCE(p.proacl,
                         pg_catalog.acldefault('f', p.proowner))) AS n
               WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(s.acl) AS o WHERE o.grantee = n.grantee)) AS a
          LEFT JOIN pg_catalog.pg_roles AS g ON g.oid = a.grantee
         WHERE a.grantee <> p.proowner
    LOOP
        EXECUTE r.sql;
    END LOOP;

    -- 5. The schema's owner, when a superuser switches another role's install.
    SELECT n.nspowner INTO r FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'pgmq';
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
       AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE oid = r.nspowner) THEN
        grant_sql := pg_catalog.quote_ident((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = r.nspowner));
        EXECUTE pg_catalog.format('ALTER SCHEMA pgmq OWNER TO %I', current_user);
        EXECUTE 'GRANT USAGE, CREATE ON SCHEMA pgmq TO ' || grant_sql;
        EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.meta, pgmq.notify_insert_throttle, pgmq.topic_bindings TO '
                || grant_sql;
        RAISE NOTICE 'schema pgmq now belongs to %; its former owner % keeps USAGE and CREATE on it', current_user,
            grant_sql;
    END IF;
    PERFORM pg_catalog.set_config('search_path', saved_path, true);
END
$switch$;

-- 6. The old configuration tables, their rows now in the new ones. Without
-- CASCADE: a view or foreign key of the user's over one of them stops the
-- switch (PostgreSQL names it), rather than being dropped with it.
DO $switch$
DECLARE
    tables pg_catalog.text;
    saved_path pg_catalog.text := pg_catalog.current_setting('search_path');
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    SELECT pg_catalog.string_agg(pg_catalog.format('pgmq_switch_scratch.%I', c.relname), ', ')
      INTO tables
      FROM pg_catalog.pg_class AS c
     WHERE c.relnamespace = 'pgmq_switch_scratch'::pg_catalog.regnamespace AND c.relkind IN ('r', 'p');
    BEGIN
        EXECUTE 'DROP TABLE ' || tables;
    EXCEPTION WHEN dependent_objects_still_exist THEN
        GET STACKED DIAGNOSTICS tables = PG_EXCEPTION_DETAIL;
        RAISE EXCEPTION 'objects of yours depend on the configuration tables of the pgmq extension being replaced'
            USING DETAIL = tables || E'\n(the switch had moved pgmq''s old tables to schema pgmq_switch_scratch)',
                  HINT = 'Drop them, run ALTER EXTENSION pgmq UPDATE, then create them again over the new tables.',
                  ERRCODE = 'dependent_objects_still_exist';
    END;
    PERFORM pg_catalog.set_config('search_path', saved_path, true);
END
$switch$;
DROP SCHEMA pgmq_switch_scratch;
