-- privileges: pgmq runs with its caller's rights. The grants the queue guide
-- documents are enough to send, read, delete and archive; a role without
-- them is refused and learns nothing about the messages; pg_monitor reads
-- metrics; a hostile search_path changes nothing; a queue name never leaves
-- its identifier quoting; grant_queue_access grants exactly one queue.
-- Message ids are shown relative to the first id of the queue.
\set VERBOSITY terse
SET client_min_messages = warning;

-- Every pgmq function runs as its caller, with no settings of its own.
SELECT count(*) AS security_definer, count(*) FILTER (WHERE proconfig IS NOT NULL) AS with_settings
FROM pg_proc WHERE pronamespace = 'pgmq'::regnamespace AND prosecdef;

-- With pg_partman present, as in production: plain queues must not need it.
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

SELECT pgmq.create('priv_q');
SELECT s AS first_id FROM pgmq.send('priv_q', '{"secret": "s0"}') AS s \gset
SELECT s - :first_id AS id FROM pgmq.send_batch('priv_q', ARRAY['{"secret": "s1"}', '{"secret": "s2"}']::jsonb[]) AS s;

CREATE ROLE regress_pgmq_app;
CREATE ROLE regress_pgmq_nobody;
CREATE ROLE regress_pgmq_usage;
CREATE ROLE regress_pgmq_monitor IN ROLE pg_monitor;

-------------------------------------------------------------------------------
-- The guide's grants, exactly
-------------------------------------------------------------------------------
GRANT USAGE ON SCHEMA pgmq TO regress_pgmq_app;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO regress_pgmq_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.q_priv_q TO regress_pgmq_app;
GRANT SELECT, INSERT ON pgmq.a_priv_q TO regress_pgmq_app;

SET ROLE regress_pgmq_app;
SELECT s - :first_id AS id FROM pgmq.send('priv_q', '{"secret": "s3"}') AS s;
SELECT s - :first_id AS id FROM pgmq.send('priv_q', '{"secret": "s4"}', '{"h": 1}'::jsonb, 0) AS s;
SELECT s - :first_id AS id FROM pgmq.send_batch('priv_q', ARRAY['{"secret": "s5"}', '{"secret": "s6"}']::jsonb[]) AS s;
SELECT msg_id - :first_id AS id, read_ct, message FROM pgmq.read('priv_q', 30, 2);
SELECT msg_id - :first_id AS id, read_ct FROM pgmq.set_vt('priv_q', :first_id + 1, 0);
SELECT msg_id - :first_id AS id, read_ct, message FROM pgmq.read_with_poll('priv_q', 30, 1, 1, 10);
SELECT pgmq.delete('priv_q', :first_id::bigint);
SELECT pgmq.archive('priv_q', :first_id + 1);
SELECT s - :first_id AS id FROM pgmq.delete('priv_q', ARRAY[:first_id + 2]::bigint[]) AS s;
SELECT s - :first_id AS id FROM pgmq.archive('priv_q', ARRAY[:first_id + 3]::bigint[]) AS s;
SELECT msg_id - :first_id AS id, message FROM pgmq.pop('priv_q');
SELECT msg_id - :first_id AS id, message FROM pgmq.read('priv_q', 30, 10, '{"secret": "s6"}');
-- metrics also reads the queue's msg_id sequence, which the guide's grants
-- leave out (grant_queue_access includes it).
SELECT queue_length FROM pgmq.metrics('priv_q');
-- Dropping, purging and creating stay with the owner.
SELECT pgmq.purge_queue('priv_q');
SELECT pgmq.drop_queue('priv_q');
SELECT pgmq.create('priv_app_q');
RESET ROLE;

SELECT msg_id - :first_id AS id, read_ct, message FROM pgmq.q_priv_q ORDER BY msg_id;
SELECT msg_id - :first_id AS id, read_ct, message FROM pgmq.a_priv_q ORDER BY msg_id;

-------------------------------------------------------------------------------
-- A queue owner who is not a superuser manages its own queues
-------------------------------------------------------------------------------
CREATE ROLE regress_pgmq_owner;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_pgmq_owner;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_pgmq_owner;
SET ROLE regress_pgmq_owner;
SELECT pgmq.create('owned_q');
SELECT count(*) AS sent FROM pgmq.send('owned_q', '{}');
SELECT pgmq.purge_queue('owned_q');
-- No access to pg_partman's schema is needed to drop a plain queue.
SELECT pgmq.drop_queue('owned_q');
RESET ROLE;

-------------------------------------------------------------------------------
-- Without the grants: refused, nothing learned, nothing changed
-------------------------------------------------------------------------------
-- No USAGE on the schema: no pgmq function can even be named.
SET ROLE regress_pgmq_nobody;
SELECT * FROM pgmq.read('priv_q', 30, 10);
SELECT * FROM pgmq.send('priv_q', '{}');
SELECT * FROM pgmq.metrics('priv_q');
SELECT * FROM pgmq.list_queues();
RESET ROLE;

-- USAGE and EXECUTE but no table privileges: every message operation is
-- refused by the table's own permission check, before any row is seen.
GRANT USAGE ON SCHEMA pgmq TO regress_pgmq_usage;
SET ROLE regress_pgmq_usage;
SELECT * FROM pgmq.read('priv_q', 30, 10);
SELECT * FROM pgmq.read_with_poll('priv_q', 30, 10, 1, 10);
SELECT * FROM pgmq.read('priv_q', 30, 10, '{"secret": "s6"}');
SELECT * FROM pgmq.pop('priv_q');
SELECT * FROM pgmq.send('priv_q', '{}');
SELECT * FROM pgmq.send_batch('priv_q', ARRAY['{}']::jsonb[]);
SELECT * FROM pgmq.set_vt('priv_q', :first_id + 5, 0);
SELECT pgmq.delete('priv_q', :first_id + 5);
SELECT pgmq.archive('priv_q', :first_id + 5);
SELECT * FROM pgmq.metrics('priv_q');
SELECT * FROM pgmq.metrics_all();
SELECT * FROM pgmq.list_queues();
SELECT pgmq.purge_queue('priv_q');
SELECT pgmq.drop_queue('priv_q');
SELECT pgmq.create('priv_usage_q');
SELECT pgmq.grant_queue_access('priv_q', 'regress_pgmq_usage');
SELECT * FROM pgmq.q_priv_q;
RESET ROLE;

-- The refused calls left the queue as it was.
SELECT msg_id - :first_id AS id, read_ct, message FROM pgmq.q_priv_q ORDER BY msg_id;

-------------------------------------------------------------------------------
-- pg_monitor reads metrics (install-time and default privileges)
-------------------------------------------------------------------------------
SET ROLE regress_pgmq_monitor;
SELECT queue_name, queue_length, queue_visible_length, total_messages - :first_id AS total_from_first
FROM pgmq.metrics('priv_q');
SELECT count(*) > 0 AS sees_queues FROM pgmq.metrics_all() WHERE queue_name = 'priv_q';
SELECT queue_name, is_partitioned, is_unlogged FROM pgmq.list_queues() WHERE queue_name = 'priv_q';
-- Monitoring only: it cannot consume or produce.
SELECT * FROM pgmq.read('priv_q', 30, 10);
SELECT * FROM pgmq.send('priv_q', '{}');
RESET ROLE;

-------------------------------------------------------------------------------
-- A hostile search_path: every name pgmq resolves is schema-qualified
-------------------------------------------------------------------------------
-- Lookalikes of the functions, operators and types pgmq uses, each recording
-- that it was called. They sit before pg_catalog in the search_path of a
-- superuser, the session an attacker would most like to capture.
CREATE SCHEMA regress_evil;
CREATE TABLE regress_evil.captured (what text);
CREATE FUNCTION regress_evil.capture(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.captured VALUES (what);
END $$;
CREATE FUNCTION regress_evil.now() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('now()');
    RETURN '2000-01-01 00:00:00+00';
END $$;
CREATE FUNCTION regress_evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('clock_timestamp()');
    RETURN '2000-01-01 00:00:00+00';
END $$;
CREATE FUNCTION regress_evil.unnest(anyarray) RETURNS SETOF anyelement LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('unnest()');
END $$;
CREATE FUNCTION regress_evil.to_regclass(text) RETURNS regclass LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('to_regclass()');
    RETURN 'pgmq.meta'::pg_catalog.regclass;
END $$;
CREATE FUNCTION regress_evil.count_step(bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('count(*)');
    RETURN 1000;
END $$;
CREATE AGGREGATE regress_evil.count(*) (SFUNC = regress_evil.count_step, STYPE = bigint, INITCOND = 0);
CREATE FUNCTION regress_evil.int8_eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('=(bigint,bigint)');
    RETURN true;
END $$;
CREATE OPERATOR regress_evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = regress_evil.int8_eq);
CREATE FUNCTION regress_evil.text_eq(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('=(text,text)');
    RETURN true;
END $$;
CREATE OPERATOR regress_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.text_eq);
CREATE FUNCTION regress_evil.ts_le(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('<=(timestamptz,timestamptz)');
    RETURN true;
END $$;
CREATE OPERATOR regress_evil.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = regress_evil.ts_le);
CREATE FUNCTION regress_evil.int4_pl(integer, integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('+(integer,integer)');
    RETURN 100;
END $$;
CREATE OPERATOR regress_evil.+ (LEFTARG = integer, RIGHTARG = integer, FUNCTION = regress_evil.int4_pl);
CREATE FUNCTION regress_evil.jsonb_contains(jsonb, jsonb) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('@>(jsonb,jsonb)');
    RETURN true;
END $$;
CREATE OPERATOR regress_evil.@> (LEFTARG = jsonb, RIGHTARG = jsonb, FUNCTION = regress_evil.jsonb_contains);
CREATE FUNCTION regress_evil.text_match(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('~(text,text)');
    RETURN true;
END $$;
CREATE OPERATOR regress_evil.~ (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.text_match);
CREATE FUNCTION regress_evil.jsonb_field(jsonb, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('->>(jsonb,text)');
    RETURN 'evil';
END $$;
CREATE OPERATOR regress_evil.->> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = regress_evil.jsonb_field);
CREATE FUNCTION regress_evil.text_cat(text, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('||(text,text)');
    RETURN 'evil';
END $$;
CREATE OPERATOR regress_evil.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.text_cat);
CREATE FUNCTION regress_evil.pg_notify(text, text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('pg_notify()');
END $$;
CREATE FUNCTION regress_evil.hashtextextended(text, bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('hashtextextended()');
    RETURN 0;
END $$;
CREATE FUNCTION regress_evil.pg_try_advisory_xact_lock(bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('pg_try_advisory_xact_lock()');
    RETURN true;
END $$;
CREATE FUNCTION regress_evil.lower(text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_evil.capture('lower()');
    RETURN 'evil';
END $$;
-- Temporary objects: the session's temp schema is searched first for
-- relations and types unless the path names it.
CREATE DOMAIN pg_temp.jsonb AS integer;
CREATE TEMP TABLE meta (queue_name text);

SET search_path = regress_evil, pg_catalog, public;
SELECT pgmq.create('evil_path_q');
SELECT s AS evil_first FROM pgmq.send('evil_path_q', '{"n": 0}') AS s \gset
SELECT s - :evil_first AS id FROM pgmq.send('evil_path_q', '{"n": 1}', 3600) AS s;
SELECT s - :evil_first AS id FROM pgmq.send_batch('evil_path_q', ARRAY['{"n": 2}', '{"n": 3}', '{"n": 4}']::pg_catalog.jsonb[]) AS s;
SELECT s - :evil_first AS id FROM pgmq.send_batch('evil_path_q', ARRAY['{"n": 5}']::pg_catalog.jsonb[], ARRAY['{"h": 5}']::pg_catalog.jsonb[]) AS s;
-- Only visible messages, in order, read_ct counted once.
SELECT msg_id - :evil_first AS id, read_ct, message FROM pgmq.read('evil_path_q', 3600, 2);
SELECT msg_id - :evil_first AS id, read_ct, message FROM pgmq.read('evil_path_q', 3600, 10, '{"n": 4}');
SELECT msg_id - :evil_first AS id, read_ct, message FROM pgmq.read_with_poll('evil_path_q', 3600, 1, 1, 10);
SELECT msg_id - :evil_first AS id, read_ct FROM pgmq.set_vt('evil_path_q', :evil_first::bigint + 2, 0);
SELECT msg_id - :evil_first AS id, read_ct FROM pgmq.set_vt('evil_path_q', ARRAY[:evil_first::bigint + 3]::bigint[], 0);
-- One id acts on one message.
SELECT pgmq.delete('evil_path_q', :evil_first::bigint);
SELECT s - :evil_first AS id FROM pgmq.delete('evil_path_q', ARRAY[:evil_first::bigint + 2]::bigint[]) AS s;
SELECT pgmq.archive('evil_path_q', :evil_first::bigint + 3);
SELECT s - :evil_first AS id FROM pgmq.archive('evil_path_q', ARRAY[:evil_first::bigint + 4]::bigint[]) AS s;
SELECT msg_id - :evil_first AS id, message FROM pgmq.pop('evil_path_q');
-- FIFO group reads.
SELECT s - :evil_first AS id FROM pgmq.send_batch('evil_path_q',
    ARRAY['{"n": 6}', '{"n": 7}', '{"n": 8}']::pg_catalog.jsonb[],
    ARRAY['{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}', '{"x-pgmq-group": "a"}']::pg_catalog.jsonb[]) AS s;
SELECT pgmq.create_fifo_index('evil_path_q'), pgmq.create_fifo_indexes_all();
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped('evil_path_q', 0, 1);
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped_rr('evil_path_q', 0, 3);
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped_head('evil_path_q', 0, 3);
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped_with_poll('evil_path_q', 0, 1, 0, 10);
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped_rr_with_poll('evil_path_q', 0, 3, 0, 10);
SELECT msg_id - :evil_first AS id, message FROM pgmq.read_grouped_head_with_poll('evil_path_q', 0, 3, 0, 10);
-- Topic routing.
SELECT pgmq.bind_topic('evil.*', 'evil_path_q');
SELECT pattern, queue_name FROM pgmq.test_routing('evil.x');
SELECT pgmq.send_topic('evil.x', '{"n": 9}');
SELECT queue_name, msg_id - :evil_first AS id FROM pgmq.send_batch_topic('evil.x', ARRAY['{"n": 10}']::pg_catalog.jsonb[]);
SELECT pattern, queue_name FROM pgmq.list_topic_bindings('evil_path_q');
SELECT pgmq.unbind_topic('evil.*', 'evil_path_q');
-- Insert notifications (the trigger runs in the sender's session).
SELECT pgmq.enable_notify_insert('evil_path_q', 0);
SELECT s - :evil_first AS id FROM pgmq.send('evil_path_q', '{"n": 11}') AS s;
SELECT pgmq.update_notify_insert('evil_path_q', 100);
SELECT s - :evil_first AS id FROM pgmq.send('evil_path_q', '{"n": 12}') AS s;
SELECT queue_name, throttle_interval_ms FROM pgmq.list_notify_insert_throttles();
SELECT pgmq.disable_notify_insert('evil_path_q');
SELECT queue_name, queue_length, queue_visible_length, total_messages - :evil_first AS total_from_first,
       default_partition_length
FROM pgmq.metrics('evil_path_q');
SELECT queue_name, queue_length FROM pgmq.metrics_all() WHERE queue_name OPERATOR(pg_catalog.=) 'evil_path_q';
SELECT queue_name, is_partitioned FROM pgmq.list_queues() WHERE queue_name OPERATOR(pg_catalog.=) 'evil_path_q';
SELECT pgmq.format_table_name('Evil_Path_Q', 'q'), pgmq.validate_queue_name('evil_path_q'),
       pgmq.acquire_queue_lock('evil_path_q');
SELECT pgmq.grant_queue_access('evil_path_q', 'regress_pgmq_app');
SELECT pgmq.create_unlogged('evil_path_unlogged');
SELECT pgmq.purge_queue('evil_path_unlogged');
SELECT pgmq.drop_queue('evil_path_unlogged');
RESET search_path;

-- Nothing was captured, and what create made uses the real types and now().
SELECT count(*) AS captured FROM regress_evil.captured;
SELECT count(*) AS evil_meta_rows FROM pg_temp.meta;
DROP SCHEMA regress_evil CASCADE;
DROP DOMAIN pg_temp.jsonb;
DROP TABLE pg_temp.meta;
SELECT attname, atttypid::regtype, pg_get_expr(adbin, adrelid) AS "default"
FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
WHERE attrelid = 'pgmq.q_evil_path_q'::regclass AND attnum > 0 ORDER BY attnum;
SELECT msg_id - :evil_first AS id, read_ct, message FROM pgmq.q_evil_path_q ORDER BY msg_id;
SELECT msg_id - :evil_first AS id, message FROM pgmq.a_evil_path_q ORDER BY msg_id;
SELECT pgmq.drop_queue('evil_path_q');

-------------------------------------------------------------------------------
-- Queue names never leave their identifier quoting
-------------------------------------------------------------------------------
CREATE TEMP TABLE tables_before AS
    SELECT relname FROM pg_class WHERE relnamespace = 'pgmq'::regnamespace;
-- Rejected: the characters upstream refuses.
SELECT pgmq.create('x"; DROP TABLE pgmq.meta; --');
SELECT pgmq.create('x'' OR ''1''=''1');
SELECT pgmq.create('x$$ DROP TABLE pgmq.meta $$');
SELECT * FROM pgmq.send('x"; DROP TABLE pgmq.meta; --', '{}');
SELECT * FROM pgmq.read('q"; DELETE FROM pgmq.meta; --', 0, 1);
SELECT pgmq.create('pq) ; ');
-- Accepted: each stays one quoted identifier.
SELECT pgmq.create('pq"dq');
SELECT pgmq.create('pq" OR "1"="1');
SELECT pgmq.create('pq"/*');
SELECT pgmq.create('pq\back\slash');
SELECT pgmq.create(E'pq\nnewline');
SELECT pgmq.create('pq ünïcødé 队列');
SELECT relname FROM pg_class
WHERE relnamespace = 'pgmq'::regnamespace AND relname NOT IN (SELECT relname FROM tables_before)
ORDER BY relname COLLATE "C";
SELECT q.name, r.message
FROM (VALUES ('pq"dq'), ('pq" OR "1"="1'), ('pq"/*'), ('pq\back\slash'), (E'pq\nnewline'), ('pq ünïcødé 队列')) AS q(name),
     LATERAL pgmq.send(q.name, jsonb_build_object('to', q.name)) AS s(id),
     LATERAL pgmq.read(q.name, 30, 1) AS r
ORDER BY q.name COLLATE "C";
SELECT name, pgmq.drop_queue(name)
FROM (VALUES ('pq"dq'), ('pq" OR "1"="1'), ('pq"/*'), ('pq\back\slash'), (E'pq\nnewline'), ('pq ünïcødé 队列')) AS q(name)
ORDER BY name COLLATE "C";
SELECT count(*) AS meta_intact FROM pgmq.meta WHERE queue_name = 'priv_q';
SELECT relname FROM pg_class
WHERE relnamespace = 'pgmq'::regnamespace AND relname NOT IN (SELECT relname FROM tables_before)
ORDER BY relname COLLATE "C";

-------------------------------------------------------------------------------
-- grant_queue_access: exactly one queue, nothing the caller cannot give
-------------------------------------------------------------------------------
CREATE ROLE regress_pgmq_helper;
CREATE ROLE "regress_pgmq ""odd"" role";
SELECT pgmq.create('grant_q');
SELECT pgmq.create('other_q');
SELECT s AS grant_first FROM pgmq.send('grant_q', '{"g": 0}') AS s \gset

SET ROLE regress_pgmq_helper;
SELECT * FROM pgmq.send('grant_q', '{}');
RESET ROLE;

SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq_helper');
SELECT has_schema_privilege('regress_pgmq_helper', 'pgmq', 'USAGE') AS schema_usage;
SELECT c.relname, a.privilege_type, a.is_grantable
FROM pg_class c, aclexplode(c.relacl) a
WHERE c.relnamespace = 'pgmq'::regnamespace AND a.grantee = 'regress_pgmq_helper'::regrole
ORDER BY 1, 2;
-- Granting again changes nothing.
SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq_helper');
SELECT count(*) AS privileges FROM pg_class c, aclexplode(c.relacl) a
WHERE c.relnamespace = 'pgmq'::regnamespace AND a.grantee = 'regress_pgmq_helper'::regrole;

SET ROLE regress_pgmq_helper;
SELECT s - :grant_first AS id FROM pgmq.send('grant_q', '{"g": 1}') AS s;
SELECT msg_id - :grant_first AS id, message FROM pgmq.read('grant_q', 30, 1);
SELECT pgmq.archive('grant_q', :grant_first::bigint);
SELECT pgmq.delete('grant_q', :grant_first + 1);
SELECT queue_name, queue_length, total_messages - :grant_first AS total_from_first FROM pgmq.metrics('grant_q');
-- Another queue stays closed.
SELECT * FROM pgmq.send('other_q', '{}');
SELECT * FROM pgmq.read('other_q', 30, 1);
-- A role that was granted access cannot pass it on.
SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq_nobody');
RESET ROLE;

-- Without the archive: the role (whose name needs quoting) can consume but
-- not archive.
SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq "odd" role', false);
SELECT c.relname, a.privilege_type
FROM pg_class c, aclexplode(c.relacl) a
WHERE c.relnamespace = 'pgmq'::regnamespace AND a.grantee = '"regress_pgmq ""odd"" role"'::regrole
ORDER BY 1, 2;
SET ROLE "regress_pgmq ""odd"" role";
SELECT s - :grant_first AS id FROM pgmq.send('grant_q', '{"g": 2}') AS s;
SELECT pgmq.archive('grant_q', :grant_first + 2);
SELECT pgmq.delete('grant_q', :grant_first + 2);
RESET ROLE;

-- Refused arguments.
SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq_no_such_role');
SELECT pgmq.grant_queue_access('grant_q', 'public');
SELECT pgmq.grant_queue_access('grant_q', 'x"; DROP TABLE pgmq.meta; --');
SELECT pgmq.grant_queue_access('no_such_q', 'regress_pgmq_helper');
SELECT pgmq.grant_queue_access('bad;name', 'regress_pgmq_helper');
SELECT pgmq.grant_queue_access(NULL, 'regress_pgmq_helper');
SELECT pgmq.grant_queue_access('grant_q', NULL);
SELECT pgmq.grant_queue_access('grant_q', 'regress_pgmq_helper', NULL);

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT pgmq.drop_queue('grant_q'), pgmq.drop_queue('other_q'), pgmq.drop_queue('priv_q');
DROP OWNED BY regress_pgmq_app, regress_pgmq_owner, regress_pgmq_nobody, regress_pgmq_usage, regress_pgmq_monitor, regress_pgmq_helper,
    "regress_pgmq ""odd"" role";
DROP ROLE regress_pgmq_app, regress_pgmq_owner, regress_pgmq_nobody, regress_pgmq_usage, regress_pgmq_monitor, regress_pgmq_helper,
    "regress_pgmq ""odd"" role";
