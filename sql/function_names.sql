-- function_names: a role with CREATE on schema pgmq (a queue owner) cannot
-- add functions under pgmq's names, which made everyone's pgmq.read,
-- pgmq.pop and pgmq.read_with_poll calls ambiguous (ours have DEFAULT
-- arguments), or could resolve an unknown-typed call to its own code (issue
-- 24), whatever command makes them: CREATE FUNCTION, CREATE TYPE (a range
-- type's constructors), an extension's script. Other names stay its own
-- business; the extension's owner may.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE regress_fn_tenant;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_fn_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_fn_tenant;
CREATE SCHEMA fn_own AUTHORIZATION regress_fn_tenant;
-- For a trusted extension (hstore) below.
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_fn_tenant', current_database()); END $$;
SELECT pgmq.create('fn_q');
SELECT count(*) AS sent FROM pgmq.send_batch('fn_q', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);

SET ROLE regress_fn_tenant;
CREATE FUNCTION pgmq.read(text, int, int) RETURNS SETOF pgmq.message_record LANGUAGE sql AS 'SELECT NULL::pgmq.message_record';
CREATE FUNCTION pgmq.pop(text) RETURNS SETOF pgmq.message_record LANGUAGE sql AS 'SELECT NULL::pgmq.message_record';
CREATE FUNCTION pgmq.read_with_poll(text, int, int, int, int) RETURNS SETOF pgmq.message_record LANGUAGE sql
    AS 'SELECT NULL::pgmq.message_record';
-- text is the preferred type for an unknown literal: send('q', '{}') would pick it.
CREATE FUNCTION pgmq.send(text, text) RETURNS SETOF bigint LANGUAGE sql AS 'SELECT -1::bigint';
CREATE PROCEDURE pgmq.purge_queue(text, int) LANGUAGE sql AS 'SELECT 1';
CREATE AGGREGATE pgmq.metrics(int) (SFUNC = int4pl, STYPE = int);
-- Renamed or moved into the schema.
CREATE FUNCTION pgmq.fn_helper(text, int, int) RETURNS int LANGUAGE sql AS 'SELECT 1';
ALTER FUNCTION pgmq.fn_helper(text, int, int) RENAME TO read;
CREATE FUNCTION fn_own.pop(text) RETURNS int LANGUAGE sql AS 'SELECT 1';
ALTER FUNCTION fn_own.pop(text) SET SCHEMA pgmq;
-- Made by other commands. A range type's constructors: send(text, text)
-- took everyone's pgmq.send('q', '{"n": 1}') and returned a range, nothing
-- sent; a multirange type's, under the name it is given; hstore's script
-- makes delete(hstore, text).
CREATE TYPE pgmq.send AS RANGE (subtype = text);
CREATE TYPE pgmq.fn_range AS RANGE (subtype = int4, multirange_type_name = pgmq.purge_queue);
CREATE EXTENSION hstore SCHEMA pgmq;
-- Its own names are its own, made by any of these.
CREATE TYPE pgmq.fn_range AS RANGE (subtype = int4);
SELECT proname FROM pg_proc WHERE pronamespace = 'pgmq'::regnamespace AND proowner = 'regress_fn_tenant'::regrole;
SELECT p.oid::regprocedure AS constructor FROM pg_proc AS p JOIN pg_depend AS d ON d.objid = p.oid
WHERE d.refobjid = 'pgmq.fn_range'::regtype AND d.deptype = 'i' ORDER BY 1::text;
DROP TYPE pgmq.fn_range;
DROP FUNCTION pgmq.fn_helper(text, int, int);
RESET ROLE;
DROP SCHEMA fn_own CASCADE;

-- The calls every client makes work for everyone.
SELECT msg_id, message FROM pgmq.read('fn_q', 0, 1);
SELECT msg_id, message FROM pgmq.pop('fn_q');
SELECT msg_id, message FROM pgmq.read_with_poll('fn_q', 0, 1, 1, 100);
SELECT pgmq.send('fn_q', '{"n": 4}') > 0 AS sent;
SELECT pgmq.purge_queue('fn_q') AS purged;

-- The extension's owner (here a superuser) may add one.
CREATE FUNCTION pgmq.read(text, bigint, bigint) RETURNS int LANGUAGE sql AS 'SELECT 1';
DROP FUNCTION pgmq.read(text, bigint, bigint);

SELECT pgmq.drop_queue('fn_q');
DROP OWNED BY regress_fn_tenant;
DROP ROLE regress_fn_tenant;
