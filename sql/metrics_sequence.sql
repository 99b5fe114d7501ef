-- metrics_sequence: metrics, metrics_all and partition_status read the
-- msg_id identity sequence found through the catalog, never a relation
-- named q_<name>_msg_id_seq (issue 19, item 2). A tenant with USAGE and
-- CREATE on schema pgmq could create a view under that name calling its own
-- function; before the fix a superuser's metrics ran it, and the tenant made
-- itself superuser.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END
$fn$;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

CREATE ROLE regress_ms_tenant;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_ms_tenant;
GRANT SELECT, INSERT ON pgmq.meta TO regress_ms_tenant;

SET ROLE regress_ms_tenant;
-- Records who ran it; as a superuser, makes the tenant superuser.
CREATE TABLE pgmq.regress_ms_calls (ran_as name);
GRANT INSERT ON pgmq.regress_ms_calls TO PUBLIC;
CREATE FUNCTION pgmq.regress_ms_evil() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO pgmq.regress_ms_calls VALUES (current_user);
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		EXECUTE 'ALTER ROLE regress_ms_tenant SUPERUSER';
	END IF;
	RETURN 42;
END$$;
-- The trap, laid before the queues exist.
CREATE VIEW pgmq.q_billing_msg_id_seq AS SELECT true AS is_called, pgmq.regress_ms_evil() AS last_value;
CREATE VIEW pgmq.q_pbilling_msg_id_seq AS SELECT true AS is_called, pgmq.regress_ms_evil() AS last_value;
RESET ROLE;

-- The superuser creates the queues and sends (whether create accepts the
-- taken name or refuses it, the checks below hold).
SELECT pg_temp.try($$SELECT pgmq.create('billing')$$) IS NOT NULL AS attempted;
SELECT pg_temp.try($$SELECT pgmq.create_partitioned('pbilling', '10', '100')$$) IS NOT NULL AS attempted;
SELECT pg_temp.try($$SELECT pgmq.send(queue_name, '{"n": 1}') FROM pgmq.meta WHERE queue_name LIKE '%billing'$$)
	IS NOT NULL AS attempted;
-- total_messages is the real sequence's (1), not the view's (42).
SELECT m.queue_name, x.total_messages FROM pgmq.meta m, LATERAL pgmq.metrics(m.queue_name) x
 WHERE m.queue_name LIKE '%billing' ORDER BY 1;
SELECT count(*) > 0 AS rows FROM pgmq.metrics_all();
SELECT s.queue_name, s.parent_table, s.current_position FROM pgmq.meta m, LATERAL pgmq.partition_status(m.queue_name) s
 WHERE m.queue_name = 'pbilling' ORDER BY 2;

-- The tenant's own queue, its sequence renamed and the name taken by the
-- view: a monitoring superuser's metrics must not run it either.
SET ROLE regress_ms_tenant;
SELECT pgmq.create('tenantq');
SELECT pgmq.send('tenantq', '{"n": 1}');
SELECT pgmq.send('tenantq', '{"n": 2}');
ALTER SEQUENCE pgmq.q_tenantq_msg_id_seq RENAME TO q_tenantq_ids;
CREATE VIEW pgmq.q_tenantq_msg_id_seq AS SELECT true AS is_called, pgmq.regress_ms_evil() AS last_value;
RESET ROLE;
SELECT queue_name, queue_length, total_messages FROM pgmq.metrics('tenantq');
SELECT queue_name, total_messages FROM pgmq.metrics_all() WHERE queue_name = 'tenantq';

-- The tenant's function never ran, and the tenant is not superuser.
SELECT count(*) AS evil_calls FROM pgmq.regress_ms_calls;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_ms_tenant';

-- A queue whose msg_id lost its identity: a clear error, not a guess.
ALTER TABLE pgmq.q_tenantq ALTER COLUMN msg_id DROP IDENTITY;
SELECT total_messages FROM pgmq.metrics('tenantq');

SELECT pg_temp.try($$SELECT pgmq.drop_queue('billing')$$) IS NOT NULL AS dropped;
SELECT pg_temp.try($$SELECT pgmq.drop_queue('pbilling')$$) IS NOT NULL AS dropped;
DROP TABLE pgmq.q_tenantq, pgmq.a_tenantq;
DELETE FROM pgmq.meta WHERE queue_name IN ('tenantq', 'billing', 'pbilling');
DROP OWNED BY regress_ms_tenant;
DROP ROLE regress_ms_tenant;
