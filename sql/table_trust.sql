-- table_trust: pgmq's functions run as their caller, so a queue table must
-- not run its owner's code with another role's rights. A queue owner
-- (USAGE, CREATE on schema pgmq) attaches code to its own queue table in
-- every way a table can carry it; a superuser, and a role with
-- grant_queue_access, then call pgmq on it: every call is refused with
-- 42501 naming what the table carries, and the trap never runs. Before, a
-- partial index whose predicate called the owner's function ran it as
-- superuser on the superuser's pgmq.peek, pgmq.read or pgmq.metrics, and
-- the owner became superuser. The owner itself still uses its queue.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE regress_tt_tenant;
CREATE ROLE regress_tt_app;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_tt_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_tt_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.topic_bindings TO regress_tt_tenant;
GRANT USAGE ON SCHEMA pgmq TO regress_tt_app;
-- What the traps record, whoever runs them.
CREATE TABLE public.tt_log (role name, trap text);
GRANT SELECT, INSERT ON public.tt_log TO PUBLIC;

-- pg_temp.try(stmt) runs one statement in a subtransaction: "ok" or the error.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
	EXECUTE 'SELECT count(*) FROM (' || stmt || ') AS s';
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END
$fn$;

-- The tenant's code: when another role runs it, it says so (a WARNING,
-- seen even when the call then fails and rolls back), records it, and
-- makes the tenant superuser if it can.
SET ROLE regress_tt_tenant;
CREATE FUNCTION pgmq.tt_trap(what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF current_user <> 'regress_tt_tenant' THEN
        RAISE WARNING 'trap % ran as %', what, current_user;
        INSERT INTO public.tt_log VALUES (current_user, what);
        IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
            EXECUTE 'ALTER ROLE regress_tt_tenant SUPERUSER';
        END IF;
    END IF;
    RETURN true;
END $$;
-- IMMUTABLE wrappers, where PostgreSQL accepts only those (and the planner
-- folds them with the planning role's rights).
CREATE FUNCTION pgmq.tt_always() RETURNS boolean LANGUAGE sql IMMUTABLE AS $$SELECT pgmq.tt_trap('always')$$;
CREATE FUNCTION pgmq.tt_imm(n integer) RETURNS integer LANGUAGE sql IMMUTABLE
    AS $$SELECT CASE WHEN pgmq.tt_trap('imm') THEN n END$$;
CREATE FUNCTION pgmq.tt_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pgmq.tt_trap('trigger ' || TG_OP);
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE DOMAIN pgmq.tt_checked AS integer CHECK (pgmq.tt_imm(coalesce(VALUE, 0)) IS NOT NULL);
CREATE TYPE pgmq.tt_mood AS ENUM ('calm', 'angry');
RESET ROLE;

-- What a superuser provides and the tenant may use: an access method, an
-- operator class and a foreign server (none is pgmq's).
CREATE ACCESS METHOD tt_am TYPE TABLE HANDLER heap_tableam_handler;
CREATE OPERATOR CLASS pgmq.tt_ops FOR TYPE bigint USING btree AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint8cmp(bigint, bigint);
CREATE FOREIGN DATA WRAPPER tt_fdw;
CREATE SERVER tt_server FOREIGN DATA WRAPPER tt_fdw;
GRANT USAGE ON FOREIGN SERVER tt_server TO regress_tt_tenant;

-- Every kind of trap, each on its own queue tt_<kind>: the SQL that plants
-- it as the tenant (%1$s is the queue table, pgmq.q_tt_<kind>).
CREATE TEMP TABLE traps (kind text PRIMARY KEY, plant text);
INSERT INTO traps VALUES
    ('index_predicate', 'CREATE INDEX ON %1$s (msg_id) WHERE pgmq.tt_always()'),
    ('index_expression', 'CREATE INDEX ON %1$s (pgmq.tt_imm(read_ct))'),
    ('index_opclass', 'CREATE INDEX ON %1$s (msg_id pgmq.tt_ops)'),
    ('check_constraint', 'ALTER TABLE %1$s ADD CONSTRAINT tt_check CHECK (pgmq.tt_imm(read_ct) IS NOT NULL)'),
    ('column_default', 'ALTER TABLE %1$s ADD COLUMN tt_extra integer DEFAULT pgmq.tt_imm(1)'),
    ('generated_column', 'ALTER TABLE %1$s ADD COLUMN tt_gen integer GENERATED ALWAYS AS (pgmq.tt_imm(read_ct)) STORED'),
    ('domain_column', 'ALTER TABLE %1$s ADD COLUMN tt_dom pgmq.tt_checked'),
    ('type_column', 'ALTER TABLE %1$s ADD COLUMN tt_mood pgmq.tt_mood'),
    ('row_security', 'ALTER TABLE %1$s ENABLE ROW LEVEL SECURITY; CREATE POLICY tt_policy ON %1$s USING (pgmq.tt_trap(''policy''))'),
    ('trigger', 'CREATE TRIGGER tt_trigger BEFORE INSERT OR UPDATE OR DELETE ON %1$s FOR EACH ROW EXECUTE FUNCTION pgmq.tt_trigger(); '
                'CREATE TRIGGER tt_truncate BEFORE TRUNCATE ON %1$s FOR EACH STATEMENT EXECUTE FUNCTION pgmq.tt_trigger()'),
    ('rule', 'CREATE RULE tt_rule AS ON UPDATE TO %1$s DO ALSO SELECT pgmq.tt_trap(''rule'')'),
    ('statistics', 'CREATE STATISTICS pgmq.tt_stats ON (pgmq.tt_imm(read_ct)), msg_id FROM %1$s'),
    ('access_method', 'ALTER TABLE %1$s SET ACCESS METHOD tt_am'),
    ('builtin_default', 'ALTER TABLE %1$s ADD COLUMN tt_seen text DEFAULT pg_catalog.set_config(''tt.seen'', CURRENT_USER, false)'),
    ('builtin_check', 'ALTER TABLE %1$s ADD CONSTRAINT tt_query CHECK (pg_catalog.query_to_xml(''SELECT pgmq.tt_trap(''''query'''')'', true, true, '''') IS NOT NULL)'),
    ('pgmq_default', 'ALTER TABLE %1$s ADD COLUMN tt_purged bigint; ALTER TABLE %1$s ALTER COLUMN tt_purged SET DEFAULT pgmq.purge_queue(''tt_victim'')'),
    ('inherited_child', 'CREATE TABLE pgmq.tt_child () INHERITS (%1$s); CREATE INDEX ON pgmq.tt_child (msg_id) WHERE pgmq.tt_always()'),
    ('foreign_partition', 'SELECT 1');

-- The calls a superuser (or an application) makes; %1$s is the queue name.
CREATE TEMP TABLE calls (n serial, stmt text);
INSERT INTO calls (stmt) VALUES
    ($$SELECT pgmq.send('%1$s', '{"n": 9}')$$),
    ($$SELECT * FROM pgmq.send_batch('%1$s', ARRAY['{"n": 10}']::jsonb[])$$),
    ($$SELECT * FROM pgmq.read('%1$s', 0, 1)$$),
    ($$SELECT * FROM pgmq.read_with_poll('%1$s', 0, 1, 1, 10)$$),
    ($$SELECT * FROM pgmq.read_grouped('%1$s', 0, 1)$$),
    ($$SELECT * FROM pgmq.pop('%1$s')$$),
    ($$SELECT * FROM pgmq.set_vt('%1$s', 1, 0)$$),
    ($$SELECT pgmq.delete('%1$s', 2::bigint)$$),
    ($$SELECT pgmq.archive('%1$s', 3::bigint)$$),
    ($$SELECT * FROM pgmq.peek('%1$s')$$),
    ($$SELECT * FROM pgmq.metrics('%1$s')$$),
    ($$SELECT * FROM pgmq.move('%1$s', 'tt_target', ARRAY[4]::bigint[])$$),
    ($$SELECT * FROM pgmq.unarchive('%1$s', ARRAY[3]::bigint[])$$),
    ($$SELECT pgmq.purge_queue('%1$s')$$);
GRANT SELECT ON traps, calls TO PUBLIC;

SELECT pgmq.create('tt_target');
SELECT pgmq.create('tt_victim');
SELECT pgmq.send('tt_victim', '{"keep": true}') > 0 AS sent;
SELECT pgmq.grant_queue_access('tt_target', 'regress_tt_app');

-- A fresh queue per kind, used by the superuser first (its plans are kept
-- and verified), then trapped by its owner, who uses it too.
SET ROLE regress_tt_tenant;
SELECT count(pgmq.create('tt_' || kind)) AS queues FROM traps WHERE kind <> 'foreign_partition';
-- A partitioned queue table of the tenant's own, with a foreign partition.
CREATE TABLE pgmq.q_tt_foreign_partition (msg_id bigint GENERATED BY DEFAULT AS IDENTITY, read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamptz DEFAULT now() NOT NULL, last_read_at timestamptz, vt timestamptz NOT NULL, message jsonb,
    headers jsonb) PARTITION BY RANGE (msg_id);
CREATE TABLE pgmq.q_tt_foreign_partition_1 PARTITION OF pgmq.q_tt_foreign_partition FOR VALUES FROM (1) TO (1000000);
CREATE TABLE pgmq.a_tt_foreign_partition (msg_id bigint PRIMARY KEY, read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamptz DEFAULT now() NOT NULL, last_read_at timestamptz, archived_at timestamptz DEFAULT now() NOT NULL,
    vt timestamptz NOT NULL, message jsonb, headers jsonb);
INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES ('tt_foreign_partition', true, false);
SELECT count(*) AS sent FROM traps, pgmq.send_batch('tt_' || kind, ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[]);
SELECT count(pgmq.grant_queue_access('tt_' || kind, 'regress_tt_app')) AS granted FROM traps;
RESET ROLE;
SELECT kind, count(*) AS calls FROM traps, LATERAL (SELECT * FROM pgmq.peek('tt_' || kind)) AS p GROUP BY kind ORDER BY kind;

-- The traps.
SET ROLE regress_tt_tenant;
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT kind, plant FROM pg_temp.traps WHERE kind <> 'foreign_partition' ORDER BY kind LOOP
        EXECUTE format(t.plant, format('pgmq.%I', 'q_tt_' || t.kind));
    END LOOP;
END $$;
CREATE FOREIGN TABLE pgmq.q_tt_foreign_partition_2 PARTITION OF pgmq.q_tt_foreign_partition
    FOR VALUES FROM (1000000) TO (2000000) SERVER tt_server;
-- The owner runs its own code as itself: its calls work.
SELECT kind, pg_temp.try(format($$SELECT pgmq.send('%1$s', '{"n": 5}')$$, 'tt_' || kind)) AS send,
       pg_temp.try(format($$SELECT * FROM pgmq.read('%1$s', 0, 1)$$, 'tt_' || kind)) AS read,
       pg_temp.try(format($$SELECT * FROM pgmq.metrics('%1$s')$$, 'tt_' || kind)) AS metrics
FROM traps WHERE kind <> 'foreign_partition' ORDER BY kind;
RESET ROLE;

-- The superuser's calls: each one refused, naming what the table carries.
SELECT kind, result, count(*) AS calls
FROM traps, calls, LATERAL (SELECT pg_temp.try(format(calls.stmt, 'tt_' || kind)) AS result) AS r
GROUP BY kind, result ORDER BY kind, result;
-- An application's calls (grant_queue_access): the same.
SET ROLE regress_tt_app;
SELECT kind, result, count(*) AS calls
FROM traps, calls, LATERAL (SELECT pg_temp.try(format(calls.stmt, 'tt_' || kind)) AS result) AS r
WHERE calls.stmt !~ 'purge_queue|unarchive'
GROUP BY kind, result ORDER BY kind, result;
RESET ROLE;
-- A topic send skips a trapped queue bound to its key (a tenant's binding
-- cannot fail everyone's sends) and delivers to the others.
SET ROLE regress_tt_tenant;
SELECT pgmq.bind_topic('tt.#', 'tt_trigger');
RESET ROLE;
SELECT pgmq.bind_topic('tt.#', 'tt_target');
SELECT pgmq.send_topic('tt.sent', '{"n": 11}') AS sent_to;
SELECT pgmq.unbind_topic('tt.#', 'tt_target');
-- metrics_all and list_policies go on without them.
SET client_min_messages = error;
SELECT queue_name FROM pgmq.metrics_all() WHERE queue_name LIKE 'tt\_%' ORDER BY 1;
RESET client_min_messages;
SET client_min_messages = warning;

-- Nothing ran as anyone but the tenant, and nothing changed hands.
SELECT * FROM public.tt_log;
SELECT rolsuper AS tenant_is_superuser FROM pg_roles WHERE rolname = 'regress_tt_tenant';
SELECT current_setting('tt.seen', true) AS set_config_ran_as;
SELECT count(*) AS victim_messages FROM pgmq.q_tt_victim;

-- The rule, asked directly (what pgmq-console asks).
SELECT kind, pgmq._table_runs_foreign_code(format('pgmq.%I', 'q_tt_' || kind)::regclass) AS reason FROM traps ORDER BY kind;
SELECT relation, reason FROM pgmq._tables_running_foreign_code(
    ARRAY['pgmq.q_tt_trigger', 'pgmq.a_tt_trigger', 'pgmq.q_tt_target', 'pgmq.q_tt_rule']::regclass[]) ORDER BY 1;
SELECT pgmq._table_runs_foreign_code('pgmq.q_tt_target') IS NULL AS target_passes;

-- A trap attached after the superuser's plans were verified, to a partition
-- of the queue table: the next call sees it.
SET ROLE regress_tt_tenant;
CREATE TABLE pgmq.q_tt_late (LIKE pgmq.q_tt_foreign_partition INCLUDING DEFAULTS INCLUDING IDENTITY) PARTITION BY RANGE (msg_id);
CREATE TABLE pgmq.q_tt_late_1 PARTITION OF pgmq.q_tt_late FOR VALUES FROM (1) TO (1000000);
CREATE TABLE pgmq.a_tt_late (LIKE pgmq.a_tt_foreign_partition INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES ('tt_late', true, false);
RESET ROLE;
SELECT pgmq.send('tt_late', '{"n": 1}') AS sent;
SELECT msg_id FROM pgmq.read('tt_late', 0, 1);
SET ROLE regress_tt_tenant;
CREATE TRIGGER tt_late_trigger BEFORE INSERT OR UPDATE ON pgmq.q_tt_late_1 FOR EACH ROW EXECUTE FUNCTION pgmq.tt_trigger();
RESET ROLE;
SELECT pg_temp.try($$SELECT pgmq.send('tt_late', '{"n": 2}')$$) AS send;
SELECT pg_temp.try($$SELECT * FROM pgmq.read('tt_late', 0, 1)$$) AS read;
-- Inside one transaction too, after a clean call.
SET ROLE regress_tt_tenant;
DROP TRIGGER tt_late_trigger ON pgmq.q_tt_late_1;
RESET ROLE;
BEGIN;
SELECT pgmq.send('tt_late', '{"n": 3}') > 0 AS sent;
SAVEPOINT s;
SET LOCAL ROLE regress_tt_tenant;
CREATE INDEX ON pgmq.q_tt_late_1 (msg_id) WHERE pgmq.tt_always();
RESET ROLE;
SELECT pg_temp.try($$SELECT * FROM pgmq.peek('tt_late')$$) AS peek;
ROLLBACK;
SELECT * FROM public.tt_log;

-- A superuser's own queue with the superuser's own trigger: the
-- application's calls run it with the application's rights, fewer than its
-- owner's, and are not refused.
CREATE FUNCTION public.tt_audit() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END $$;
SELECT pgmq.create('tt_admin');
CREATE TRIGGER tt_audit BEFORE INSERT ON pgmq.q_tt_admin FOR EACH ROW EXECUTE FUNCTION public.tt_audit();
SELECT pgmq.grant_queue_access('tt_admin', 'regress_tt_app');
SET ROLE regress_tt_app;
SELECT pgmq.send('tt_admin', '{"n": 1}') AS sent;
SELECT pgmq._table_runs_foreign_code('pgmq.q_tt_admin') AS reason;
RESET ROLE;
DROP FUNCTION public.tt_audit() CASCADE;

-- The owner may remove its trap, and the queue serves everyone again.
SET ROLE regress_tt_tenant;
DROP INDEX pgmq.q_tt_index_predicate_msg_id_idx;
RESET ROLE;
SELECT count(*) AS read FROM pgmq.read('tt_index_predicate', 0, 1);

DROP TABLE pgmq.tt_child;
DO $$
DECLARE
    q text;
BEGIN
    FOR q IN SELECT queue_name FROM pgmq.meta WHERE queue_name LIKE 'tt\_%' LOOP
        PERFORM pgmq.drop_queue(q);
    END LOOP;
END $$;
DROP TABLE public.tt_log;
DROP SERVER tt_server;
DROP FOREIGN DATA WRAPPER tt_fdw;
DROP OPERATOR CLASS pgmq.tt_ops USING btree;
DROP OPERATOR FAMILY pgmq.tt_ops USING btree;
DROP OWNED BY regress_tt_tenant, regress_tt_app;
DROP ACCESS METHOD tt_am;
DROP ROLE regress_tt_tenant;
DROP ROLE regress_tt_app;
