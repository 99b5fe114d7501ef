-- sql/switch/prologue.sql: the first part of every update script that
-- switches a database from upstream pgmq (any 1.5.0 to 1.13.x release), or
-- from this extension's own '1.13.1', to this version (Makefile.pgxs
-- generates pgmq--<from>--<to>.sql as this file, the install script's body,
-- then epilogue.sql). It reads the catalog instead of assuming one
-- release's layout, so one prologue serves every release; the differences it
-- bridges are listed in docs/compatibility.md ("Switching in place").
--
-- After this part the schema holds no object of the old extension, so the
-- install script's body runs as it does for CREATE EXTENSION:
--  1. the insert-notification triggers, which call the old trigger function,
--     are noted and dropped (the epilogue re-creates them);
--  2. the old configuration tables (meta, notify_insert_throttle,
--     topic_bindings) leave the extension and move, rows, indexes and all,
--     to schema pgmq_switch_scratch (the epilogue copies their rows into the
--     new tables and drops the schema);
--  3. any other member relation (queue tables and sequences, members before
--     1.6) leaves the extension and stays where it is;
--  4. the old event triggers, functions, procedures and types are dropped, without CASCADE:
--     an object of the user's that depends on one stops the switch with
--     PostgreSQL's error, and the transaction rolls back with nothing lost;
--  5. queue tables get the columns and identity kind this version expects.
-- It also keeps the privileges on the old functions (the epilogue gives them
-- to the new ones of the same signature).
-- Nothing here touches a message row or a sequence.

CREATE SCHEMA pgmq_switch_scratch;
CREATE TABLE pgmq_switch_scratch.switch_notify_triggers (queue_table pg_catalog.regclass NOT NULL);
-- The privileges on every other relation of schema pgmq (queue tables, their
-- partitions and sequences): the install script's GRANT ... ON ALL TABLES IN
-- SCHEMA pgmq TO pg_monitor must not widen them (the epilogue revokes what it added).
CREATE TABLE pgmq_switch_scratch.switch_acls (rel pg_catalog.regclass NOT NULL, acl pg_catalog.aclitem[]);
INSERT INTO pgmq_switch_scratch.switch_acls
    SELECT c.oid, c.relacl FROM pg_catalog.pg_class AS c
     WHERE c.relnamespace OPERATOR(pg_catalog.=) 'pgmq'::pg_catalog.regnamespace
       AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p,S,v,m,f}'::pg_catalog."char"[])
       AND c.relname OPERATOR(pg_catalog.!~) '^(meta|notify_insert_throttle|topic_bindings)$';

-- The privileges on the old extension's functions and procedures (a REVOKE
-- EXECUTE ... FROM PUBLIC, say): the epilogue gives this version's routine
-- of the same name and arguments the same.
CREATE TABLE pgmq_switch_scratch.switch_routine_acls (
    name pg_catalog.name NOT NULL, args pg_catalog.text NOT NULL, acl pg_catalog.aclitem[] NOT NULL);
INSERT INTO pgmq_switch_scratch.switch_routine_acls
    SELECT p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid), p.proacl
      FROM pg_catalog.pg_proc AS p
      JOIN pg_catalog.pg_depend AS d
        ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND d.objid OPERATOR(pg_catalog.=) p.oid
       AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
       AND d.deptype OPERATOR(pg_catalog.=) 'e'
     WHERE d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension AS e
                                                WHERE e.extname OPERATOR(pg_catalog.=) 'pgmq')
       AND p.proacl IS NOT NULL;

DO $switch$
DECLARE
    saved_path pg_catalog.text := pg_catalog.current_setting('search_path');
    ext pg_catalog.oid;
    scratch pg_catalog.oid;
    r record;
BEGIN
    -- This runs as the extension's owner: no name below may resolve to an
    -- operator or function that a role with CREATE on schema pgmq made.
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    ext := (SELECT e.oid FROM pg_catalog.pg_extension AS e WHERE e.extname = 'pgmq');
    scratch := 'pgmq_switch_scratch'::pg_catalog.regnamespace;

    -- 1. Triggers that run a function of the old extension, on tables that
    -- are not the extension's own (those go with their table, step 2).
    FOR r IN
        SELECT t.tgrelid, t.tgname, pg_catalog.format('%I.%I', n.nspname, c.relname) AS tbl
          FROM pg_catalog.pg_trigger AS t
          JOIN pg_catalog.pg_class AS c ON c.oid = t.tgrelid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
          JOIN pg_catalog.pg_depend AS d
            ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = t.tgfoid
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
         WHERE NOT t.tgisinternal
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS m
                            WHERE m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND m.objid = t.tgrelid
                              AND m.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                              AND m.refobjid = ext AND m.deptype = 'e'
                              AND c.relname !~ '^[qa]_')
    LOOP
        IF r.tgname <> 'trigger_notify_queue_insert_listeners' THEN
            RAISE EXCEPTION 'trigger % on % calls a function of the pgmq extension being replaced', r.tgname, r.tbl
                USING HINT = 'Drop the trigger, switch, then create it again with this version''s function.';
        END IF;
        INSERT INTO pgmq_switch_scratch.switch_notify_triggers VALUES (r.tgrelid);
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;

    -- 2. Configuration tables: every member table of schema pgmq that is not
    -- a queue table (those are q_<name> and a_<name>).
    FOR r IN
        SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS tbl
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_class AS c ON c.oid = d.objid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
         WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
           AND c.relkind IN ('r', 'p') AND n.nspname = 'pgmq' AND c.relname !~ '^[qa]_'
    LOOP
        -- Leaving the extension also removes its pg_extension_config_dump entry.
        EXECUTE pg_catalog.format('ALTER EXTENSION pgmq DROP TABLE %s', r.tbl);
        EXECUTE pg_catalog.format('ALTER TABLE %s SET SCHEMA pgmq_switch_scratch', r.tbl);
    END LOOP;
    -- What may tie the moved tables to old functions: row security policies
    -- (this extension's), triggers, generated columns (topic_bindings),
    -- defaults and CHECK constraints. The moved tables are only read from
    -- now on, so none of it is needed.
    FOR r IN
        SELECT t.tgname, c.relname FROM pg_catalog.pg_trigger AS t
          JOIN pg_catalog.pg_class AS c ON c.oid = t.tgrelid
         WHERE c.relnamespace = scratch AND NOT t.tgisinternal
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON pgmq_switch_scratch.%I', r.tgname, r.relname);
    END LOOP;
    FOR r IN
        SELECT k.conname, c.relname FROM pg_catalog.pg_constraint AS k
          JOIN pg_catalog.pg_class AS c ON c.oid = k.conrelid
         WHERE c.relnamespace = scratch AND k.contype = 'c'
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE pgmq_switch_scratch.%I DROP CONSTRAINT %I', r.relname, r.conname);
    END LOOP;
    FOR r IN
        SELECT c.relname, a.attname FROM pg_catalog.pg_attrdef AS ad
          JOIN pg_catalog.pg_class AS c ON c.oid = ad.adrelid
          JOIN pg_catalog.pg_attribute AS a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
         WHERE c.relnamespace = scratch AND a.attgenerated = ''
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE pgmq_switch_scratch.%I ALTER COLUMN %I DROP DEFAULT', r.relname, r.attname);
    END LOOP;
    FOR r IN
        SELECT p.polname, c.relname FROM pg_catalog.pg_policy AS p
          JOIN pg_catalog.pg_class AS c ON c.oid = p.polrelid WHERE c.relnamespace = scratch
    LOOP
        EXECUTE pg_catalog.format('DROP POLICY %I ON pgmq_switch_scratch.%I', r.polname, r.relname);
    END LOOP;
    FOR r IN
        SELECT c.relname, a.attname FROM pg_catalog.pg_attribute AS a
          JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
         WHERE c.relnamespace = scratch AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated <> ''
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE pgmq_switch_scratch.%I ALTER COLUMN %I DROP EXPRESSION',
                                  r.relname, r.attname);
    END LOOP;

    -- The moved tables are read from now on, as the role running the switch:
    -- only columns of built-in types. A type of the old owner's (who may not
    -- be a superuser: upstream's control file allows that) with a cast to a
    -- built-in type would run its code in that role.
    FOR r IN
        SELECT c.relname, pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' '
                                                || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ') AS cols
          FROM pg_catalog.pg_attribute AS a
          JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
         WHERE c.relnamespace = scratch AND a.attnum > 0 AND NOT a.attisdropped
           AND a.atttypid >= 16384  -- FirstNormalObjectId: not built in
         GROUP BY c.relname
    LOOP
        RAISE EXCEPTION 'pgmq.% of the extension being replaced has columns of types that are not built in: %',
            r.relname, r.cols
            USING HINT = 'Give them the column types upstream pgmq has, then switch.', ERRCODE = 'datatype_mismatch';
    END LOOP;

    -- 3. Other member relations: queue tables and their sequences (members
    -- up to upstream 1.5.x). They stay, as ordinary tables.
    FOR r IN
        SELECT c.relkind, pg_catalog.format('%I.%I', n.nspname, c.relname) AS rel
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_class AS c ON c.oid = d.objid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
         WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
           AND c.relnamespace <> scratch
    LOOP
        EXECUTE pg_catalog.format('ALTER EXTENSION pgmq DROP %s %s',
            CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                           ELSE 'TABLE' END, r.rel);
    END LOOP;

    -- 4. The old event triggers (this extension's own guard of pgmq's
    -- function names: the install script makes it again), the old functions
    -- and procedures, then the old types.
    FOR r IN
        SELECT pg_catalog.quote_ident(t.evtname) AS evt
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_event_trigger AS t ON t.oid = d.objid
         WHERE d.classid = 'pg_catalog.pg_event_trigger'::pg_catalog.regclass
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
    LOOP
        EXECUTE 'DROP EVENT TRIGGER ' || r.evt;
    END LOOP;
    FOR r IN
        SELECT p.prokind,
               pg_catalog.format('%I.%I(%s)', n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid)) AS fn
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_proc AS p ON p.oid = d.objid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
         WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
    LOOP
        EXECUTE pg_catalog.format('DROP %s %s',
            CASE r.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END, r.fn);
    END LOOP;
    FOR r IN
        SELECT pg_catalog.format('%I.%I', n.nspname, t.typname) AS typ
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_type AS t ON t.oid = d.objid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = t.typnamespace
         WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
           -- An array type goes with its element type, and a table's row
           -- type with its table (from PostgreSQL 17 both are members of the
           -- extension too): only the types of their own.
           AND NOT (t.typcategory OPERATOR(pg_catalog.=) 'A' AND t.typelem OPERATOR(pg_catalog.<>) 0)
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.typrelid
                              AND c.relkind OPERATOR(pg_catalog.<>) 'c')
    LOOP
        EXECUTE pg_catalog.format('DROP TYPE %s', r.typ);
    END LOOP;

    -- Anything else the old extension owned is a layout this switch does not
    -- know: stop rather than leave it behind or lose it. (The scratch schema
    -- and its bookkeeping tables are this script's.)
    FOR r IN
        SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS what
          FROM pg_catalog.pg_depend AS d
         WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext AND d.deptype = 'e'
           AND NOT (d.classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND d.objid = scratch)
           AND NOT (d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                    AND d.objid IN (SELECT c.oid FROM pg_catalog.pg_class AS c WHERE c.relnamespace = scratch))
           AND NOT (d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                    AND d.objid IN (SELECT t.oid FROM pg_catalog.pg_type AS t WHERE t.typnamespace = scratch))
    LOOP
        RAISE EXCEPTION 'the pgmq extension being replaced has an object this switch does not handle: %', r.what;
    END LOOP;

    -- 5. Queue tables, found from the old meta by upstream's naming rule
    -- (lower() of the name). Upstream appended headers in 1.5.0 and
    -- last_read_at in 1.10.0 (1.10.0's create omitted it); partitioned
    -- queues have BY DEFAULT identities from 1.13.0 on, so that rows can be
    -- moved out of a default partition with their ids.
    IF pg_catalog.to_regclass('pgmq_switch_scratch.meta') IS NULL THEN
        RAISE EXCEPTION 'the pgmq extension being replaced has no table pgmq.meta';
    END IF;
    FOR r IN
        SELECT m.queue_name::pg_catalog.text AS queue_name, m.is_partitioned, k.prefix,
               pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', k.prefix || pg_catalog.lower(m.queue_name::pg_catalog.text))) AS tbl,
               pg_catalog.lower(m.queue_name::pg_catalog.text)
                   <> pg_catalog.translate(m.queue_name::pg_catalog.text, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
                                           'abcdefghijklmnopqrstuvwxyz') AS locale_lowered
          FROM pgmq_switch_scratch.meta AS m, (VALUES ('q_'), ('a_')) AS k (prefix)
    LOOP
        IF r.tbl IS NULL THEN
            RAISE WARNING 'queue "%" has no table pgmq.%', r.queue_name,
                pg_catalog.quote_ident(r.prefix || pg_catalog.lower(r.queue_name));
            CONTINUE;
        END IF;
        IF r.locale_lowered AND r.prefix = 'q_' THEN
            RAISE WARNING 'queue "%": its tables were named with the database locale''s lower-casing, this version lower-cases ASCII letters only', r.queue_name
                USING HINT = 'Rename its q_ and a_ tables, see docs/compatibility.md.';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS a
                        WHERE a.attrelid = r.tbl AND a.attname = 'headers' AND NOT a.attisdropped) THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN headers pg_catalog.jsonb', r.tbl);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS a
                        WHERE a.attrelid = r.tbl AND a.attname = 'last_read_at' AND NOT a.attisdropped) THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN last_read_at pg_catalog.timestamptz', r.tbl);
        END IF;
        IF r.is_partitioned AND r.prefix = 'q_' AND EXISTS (
                SELECT 1 FROM pg_catalog.pg_attribute AS a
                 WHERE a.attrelid = r.tbl AND a.attname = 'msg_id' AND a.attidentity = 'a') THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN msg_id SET GENERATED BY DEFAULT', r.tbl);
        END IF;
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', saved_path, true);
END
$switch$;

-- The body of the install script follows: this version's meta and other
-- configuration tables, types and functions.
