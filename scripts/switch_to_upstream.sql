-- scripts/switch_to_upstream.sql: the way back from this extension to
-- upstream pgmq, in one database, keeping every queue, message, sequence,
-- archive row, pg_partman configuration, topic binding and notification
-- setting. Run it after upstream's package has replaced this one's files
-- (docs/compatibility.md, "Back to upstream pgmq"), as the extension's owner:
--
--   psql -X -d appdb -f scripts/switch_to_upstream.sql
--   psql -X -d appdb -v upstream_version=1.13.1 -f scripts/switch_to_upstream.sql
--
-- It is one transaction: on any error nothing has changed. It calls none of
-- this extension's C functions, so it works once pgmq.so is gone.
\set ON_ERROR_STOP on
BEGIN;
-- Only the system's operators and functions, and the ones named with their schema.
SET LOCAL search_path = pg_catalog, pg_temp;

-- 0. Upstream can neither pause a queue nor order it by priority: a paused
-- queue would start delivering the moment upstream's files are in, and a
-- queue with priorities would silently become oldest first. Stop here
-- instead, naming them.
DO $unsupported$
DECLARE
    paused text := (SELECT string_agg(p.queue_name, ', ' ORDER BY p.queue_name)
                      FROM pgmq.policies AS p WHERE p.paused_at IS NOT NULL);
    prioritized text := (SELECT string_agg(p.queue_name, ', ' ORDER BY p.queue_name)
                           FROM pgmq.policies AS p WHERE p.priority_levels IS NOT NULL);
BEGIN
    IF paused IS NOT NULL THEN
        RAISE EXCEPTION 'paused queues: %', paused
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Upstream pgmq cannot pause a queue: resume them first (SELECT pgmq.resume(name)).';
    END IF;
    IF prioritized IS NOT NULL THEN
        RAISE EXCEPTION 'queues with priorities: %', prioritized
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Upstream pgmq reads oldest first: clear them first (SELECT pgmq.clear_priority(name)).';
    END IF;
END
$unsupported$;

-- 1. The rows of the configuration tables, which DROP EXTENSION drops.
CREATE TEMPORARY TABLE switch_meta ON COMMIT DROP AS
    SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta;
CREATE TEMPORARY TABLE switch_bindings ON COMMIT DROP AS
    SELECT pattern, queue_name, bound_at FROM pgmq.topic_bindings;
CREATE TEMPORARY TABLE switch_throttles ON COMMIT DROP AS
    SELECT queue_name, throttle_interval_ms, last_notified_at FROM pgmq.notify_insert_throttle;
-- and the privileges granted on them (to applications, say), but their owner's.
CREATE TEMPORARY TABLE switch_grants ON COMMIT DROP AS
    SELECT c.relname, a.privilege_type, a.grantee, a.is_grantable
      FROM pg_class AS c, aclexplode(c.relacl) AS a
     WHERE c.relnamespace = 'pgmq'::regnamespace AND a.grantee <> c.relowner
       AND c.relname IN ('meta', 'notify_insert_throttle', 'topic_bindings');
-- and those on every other relation of schema pgmq (queue tables, their
-- partitions and sequences), which upstream's install script widens with
-- GRANT ... ON ALL TABLES IN SCHEMA pgmq TO pg_monitor.
CREATE TEMPORARY TABLE switch_acls ON COMMIT DROP AS
    SELECT c.oid::regclass AS rel, c.relacl AS acl
      FROM pg_class AS c
     WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind = ANY ('{r,p,S,v,m,f}'::"char"[])
       AND c.relname NOT IN ('meta', 'notify_insert_throttle', 'topic_bindings');

-- and the privileges on this extension's functions and procedures (a REVOKE
-- EXECUTE ... FROM PUBLIC, say), for upstream's of the same signature.
CREATE TEMPORARY TABLE switch_routine_acls ON COMMIT DROP AS
    SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, p.proacl AS acl
      FROM pg_proc AS p
      JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
       AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
     WHERE d.refobjid = (SELECT e.oid FROM pg_extension AS e WHERE e.extname = 'pgmq') AND p.proacl IS NOT NULL;

-- 2. The insert-notification triggers run this extension's trigger function:
-- drop them here (step 5 re-creates them with upstream's), so that DROP
-- EXTENSION needs no CASCADE.
DO $back$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT t.tgname, pg_catalog.format('%I.%I', n.nspname, c.relname) AS tbl
          FROM pg_catalog.pg_trigger AS t
          JOIN pg_catalog.pg_class AS c ON c.oid = t.tgrelid
          JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
         WHERE NOT t.tgisinternal AND t.tgfoid = 'pgmq.notify_queue_listeners()'::pg_catalog.regprocedure
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;
END
$back$;

-- 3. This extension's functions, types and configuration tables. Queue
-- tables are not members and stay. Without CASCADE: an object of yours that
-- uses a pgmq function or type stops the switch here, with nothing changed.
DROP EXTENSION pgmq;

-- 4. Upstream's objects, from upstream's files.
\if :{?upstream_version}
CREATE EXTENSION pgmq VERSION :'upstream_version';
\else
CREATE EXTENSION pgmq;
\endif

-- 5. The configuration rows back, the triggers through upstream's own
-- function (which resets last_notified_at: restored after), the grants, and
-- the privileges on queue tables and functions as they were.
INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged, created_at)
    SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pg_temp.switch_meta;
INSERT INTO pgmq.topic_bindings (pattern, queue_name, bound_at)
    SELECT pattern, queue_name, bound_at FROM pg_temp.switch_bindings;
-- Upstream's enable_notify_insert first drops the trigger, which step 2 did:
-- its "does not exist, skipping" NOTICE would only be noise, as would a
-- result row per queue.
SET LOCAL client_min_messages = warning;
DO $back$
BEGIN
    PERFORM pgmq.enable_notify_insert(queue_name, throttle_interval_ms) FROM pg_temp.switch_throttles;
END
$back$;
RESET client_min_messages;
UPDATE pgmq.notify_insert_throttle AS t SET last_notified_at = s.last_notified_at
  FROM pg_temp.switch_throttles AS s WHERE t.queue_name = s.queue_name;
DO $back$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT format('GRANT %s ON pgmq.%I TO %s%s', g.privilege_type, g.relname,
                      CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(o.rolname) END,
                      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) AS grant_sql
          FROM pg_temp.switch_grants AS g LEFT JOIN pg_roles AS o ON o.oid = g.grantee
    LOOP
        EXECUTE r.grant_sql;
    END LOOP;
    FOR r IN
        SELECT format('REVOKE %s ON %s pgmq.%I FROM %s', a.privilege_type,
                      CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname,
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(o.rolname) END) AS revoke_sql
          FROM pg_temp.switch_acls AS s
          JOIN pg_class AS c ON c.oid = s.rel
          CROSS JOIN LATERAL aclexplode(c.relacl) AS a
          LEFT JOIN pg_roles AS o ON o.oid = a.grantee
         WHERE a.grantee <> c.relowner
           AND NOT EXISTS (SELECT 1 FROM aclexplode(s.acl) AS k
                            WHERE k.grantee = a.grantee AND k.privilege_type = a.privilege_type)
    LOOP
        EXECUTE r.revoke_sql;
    END LOOP;
    -- Routines of the same signature: grants and revocations as they were
    -- (the same rule as sql/switch/epilogue.sql's, on the way in).
    FOR r IN
        SELECT format('%s EXECUTE ON ROUTINE pgmq.%I(%s) %s %s%s',
                      CASE WHEN a.kept THEN 'GRANT' ELSE 'REVOKE' END, p.proname, s.args,
                      CASE WHEN a.kept THEN 'TO' ELSE 'FROM' END,
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(o.rolname) END,
                      CASE WHEN a.kept AND a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) AS acl_sql
          FROM pg_temp.switch_routine_acls AS s
          JOIN pg_proc AS p ON p.pronamespace = 'pgmq'::regnamespace AND p.proname = s.name
           AND pg_get_function_identity_arguments(p.oid) = s.args
          CROSS JOIN LATERAL (
              SELECT k.grantee, k.is_grantable, true AS kept FROM aclexplode(s.acl) AS k
               WHERE NOT EXISTS (SELECT 1 FROM aclexplode(COALESCE(p.proacl, acldefault('f', p.proowner))) AS n
                                  WHERE n.grantee = k.grantee AND n.is_grantable = k.is_grantable)
              UNION ALL
              SELECT n.grantee, false, false FROM aclexplode(COALESCE(p.proacl, acldefault('f', p.proowner))) AS n
               WHERE NOT EXISTS (SELECT 1 FROM aclexplode(s.acl) AS k WHERE k.grantee = n.grantee)) AS a
          LEFT JOIN pg_roles AS o ON o.oid = a.grantee
         WHERE a.grantee <> p.proowner
    LOOP
        EXECUTE r.acl_sql;
    END LOOP;
END
$back$;

COMMIT;
