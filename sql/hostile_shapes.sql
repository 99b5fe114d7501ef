-- hostile_shapes: a queue table whose shape is not what pgmq makes (issue
-- 10, part 1) gets a clear ERROR naming the table, the column and the types,
-- never a crashed backend. A queue owner (USAGE, CREATE on schema pgmq) can
-- ALTER its own queue table; before the fix, pgmq.read of a queue whose
-- message column had become text stored the text as jsonb and the server
-- crashed (signal 11).
-- pg_temp.try() runs one statement in a subtransaction and prints
-- "ok: <rows>" or "ERROR <SQLSTATE>: <message>".
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
	n bigint;
BEGIN
	EXECUTE 'SELECT count(s) FROM (' || stmt || ') AS s' INTO n;
	RETURN 'ok: ' || n || ' row(s)';
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END
$fn$;

-- Every call that reads or writes a queue's table; %1$s is the queue.
CREATE TEMP TABLE calls (n serial, stmt text);
INSERT INTO calls (stmt) VALUES
	($$SELECT * FROM pgmq.read('%1$s', 0, 5)$$),
	($$SELECT * FROM pgmq.read('%1$s', 0, 5, '{"k": 1}')$$),
	($$SELECT * FROM pgmq.read_with_poll('%1$s', 0, 5, 1, 10)$$),
	($$SELECT * FROM pgmq.pop('%1$s')$$),
	($$SELECT * FROM pgmq.set_vt('%1$s', 1, 0)$$),
	($$SELECT * FROM pgmq.set_vt('%1$s', 1, now())$$),
	($$SELECT * FROM pgmq.set_vt('%1$s', ARRAY[1, 2]::bigint[], 0)$$),
	($$SELECT * FROM pgmq.set_vt('%1$s', ARRAY[1, 2]::bigint[], now())$$),
	($$SELECT * FROM pgmq.read_grouped('%1$s', 0, 5)$$),
	($$SELECT * FROM pgmq.read_grouped_with_poll('%1$s', 0, 5, 1, 10)$$),
	($$SELECT * FROM pgmq.read_grouped_rr('%1$s', 0, 5)$$),
	($$SELECT * FROM pgmq.read_grouped_rr_with_poll('%1$s', 0, 5, 1, 10)$$),
	($$SELECT * FROM pgmq.read_grouped_head('%1$s', 0, 5)$$),
	($$SELECT * FROM pgmq.read_grouped_head_with_poll('%1$s', 0, 5, 1, 10)$$),
	($$SELECT * FROM pgmq.send('%1$s', '{"k": 1}')$$),
	($$SELECT * FROM pgmq.send_batch('%1$s', ARRAY['{"k": 1}']::jsonb[])$$),
	($$SELECT pgmq.delete('%1$s', 1::bigint)$$),
	($$SELECT * FROM pgmq.delete('%1$s', ARRAY[2]::bigint[])$$),
	($$SELECT pgmq.archive('%1$s', 3::bigint)$$),
	($$SELECT * FROM pgmq.archive('%1$s', ARRAY[4]::bigint[])$$),
	($$SELECT * FROM pgmq.metrics('%1$s')$$);

-- A fresh queue named hs with five visible messages (ids 1..5).
CREATE FUNCTION pg_temp.fresh_queue() RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
	DROP TABLE IF EXISTS pgmq.q_hs, pgmq.a_hs;
	DELETE FROM pgmq.meta WHERE queue_name = 'hs';
	PERFORM pgmq.create('hs');
	PERFORM pgmq.send_batch('hs', ARRAY(SELECT jsonb_build_object('k', i) FROM generate_series(1, 5) i));
END
$fn$;
-- Every call against hs after `damage`, each on the damaged table.
CREATE FUNCTION pg_temp.sweep(damage text) RETURNS TABLE (n int, result text) LANGUAGE plpgsql AS $fn$
BEGIN
	PERFORM pg_temp.fresh_queue();
	EXECUTE damage;
	RETURN QUERY SELECT c.n, pg_temp.try(format(c.stmt, 'hs')) FROM calls c ORDER BY c.n;
END
$fn$;

-------------------------------------------------------------------------------
-- The issue's reproduction, exactly: a queue owner changes the message
-- column's type; a superuser reads.
-------------------------------------------------------------------------------
CREATE ROLE regress_hs_qowner;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_hs_qowner;
GRANT SELECT, INSERT ON pgmq.meta TO regress_hs_qowner;
SET ROLE regress_hs_qowner;
SELECT pgmq.create('tc3');
SELECT pgmq.send('tc3', '{"hello":"world","x":[1,2,3]}');
ALTER TABLE pgmq.q_tc3 ALTER COLUMN message TYPE text USING message::text;
RESET ROLE;
SELECT * FROM pgmq.read('tc3', 0, 1);
-- headers as text ("unknown type of jsonb container" before the fix).
ALTER TABLE pgmq.q_tc3 ALTER COLUMN message TYPE jsonb USING message::jsonb;
ALTER TABLE pgmq.q_tc3 ALTER COLUMN headers TYPE text;
SELECT * FROM pgmq.read('tc3', 0, 1);
-- Restored, the queue works again and nothing was lost.
ALTER TABLE pgmq.q_tc3 ALTER COLUMN headers TYPE jsonb USING headers::jsonb;
SELECT msg_id, read_ct, message FROM pgmq.read('tc3', 0, 1);

-- A plan kept from before the ALTER: the next call sees the change, also
-- inside one transaction.
ALTER TABLE pgmq.q_tc3 ALTER COLUMN message TYPE text USING message::text;
SELECT * FROM pgmq.read('tc3', 0, 1);
ALTER TABLE pgmq.q_tc3 ALTER COLUMN message TYPE jsonb USING message::jsonb;
BEGIN;
SELECT msg_id, read_ct FROM pgmq.read('tc3', 0, 1);
ALTER TABLE pgmq.q_tc3 ALTER COLUMN read_ct TYPE bigint;
SELECT msg_id, read_ct FROM pgmq.read('tc3', 0, 1);
ROLLBACK;
SELECT msg_id, read_ct FROM pgmq.read('tc3', 0, 1);
SELECT pgmq.drop_queue('tc3');

-- The same trap laid before the queue exists: a wrongly typed q_<name>
-- that create accepts (CREATE TABLE IF NOT EXISTS).
CREATE TABLE pgmq.q_pre (msg_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, read_ct int DEFAULT 0 NOT NULL,
	enqueued_at timestamptz DEFAULT now() NOT NULL, last_read_at timestamptz, vt timestamptz NOT NULL,
	message text, headers jsonb);
INSERT INTO pgmq.q_pre (vt, message) VALUES (now(), 'not json');
-- (Whether create accepts the table or refuses it, the reads must not crash.)
SELECT pg_temp.try($$SELECT pgmq.create('pre')$$) IS NOT NULL AS attempted;
SELECT * FROM pgmq.read('pre', 0, 1);
SELECT * FROM pgmq.pop('pre');
DROP TABLE pgmq.q_pre;
DROP TABLE IF EXISTS pgmq.a_pre;
DELETE FROM pgmq.meta WHERE queue_name = 'pre';

-------------------------------------------------------------------------------
-- Every call, for each kind of damage: the table's own check names what is
-- wrong (42804 type, 42703 missing column, 42809 not a table, 42P16 no
-- identity); no call misreads a value.
-------------------------------------------------------------------------------
SELECT n, stmt FROM calls ORDER BY n;
-- A healthy queue first: every call works.
SELECT * FROM pg_temp.sweep('SELECT 1');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.q_hs ALTER COLUMN message TYPE text');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.q_hs ALTER COLUMN msg_id TYPE integer');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.q_hs ALTER COLUMN vt TYPE timestamp');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.q_hs DROP COLUMN headers');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.q_hs ALTER COLUMN msg_id DROP IDENTITY');
-- Replaced by an (auto-updatable) view over a table of the right shape.
SELECT * FROM pg_temp.sweep($$
	CREATE TABLE public.hs_elsewhere (LIKE pgmq.q_hs INCLUDING ALL);
	DROP TABLE pgmq.q_hs;
	CREATE VIEW pgmq.q_hs AS SELECT * FROM public.hs_elsewhere$$);
DROP VIEW pgmq.q_hs;
DROP TABLE public.hs_elsewhere;
-- The archive's damage shows in archive, and nowhere else.
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.a_hs ALTER COLUMN archived_at TYPE text');
SELECT * FROM pg_temp.sweep('ALTER TABLE pgmq.a_hs ALTER COLUMN msg_id TYPE integer');

-- Restored, the same backend (with its kept plans) works again.
SELECT * FROM pg_temp.sweep('SELECT 1');
SELECT pgmq.drop_queue('hs');

DROP OWNED BY regress_hs_qowner;
DROP ROLE regress_hs_qowner;
