-- leftover_rows: rows that outlive their queue's table (a tenant drops its
-- tables with DROP TABLE; another spelling of the name is dropped) are never
-- adopted by the next queue of that name: its policies and deduplication ids
-- are pinned to the table they were written for, create forgets them, and
-- every spelling of a name is one queue. A dead-letter queue is checked where
-- it is used as well as where it is written. (Issue 24: a superuser's new
-- queue dead-lettered into a tenant's queue, whose trigger then ran as
-- superuser.)
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE regress_lo_tenant;
CREATE ROLE regress_lo_victim;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_lo_tenant, regress_lo_victim;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_lo_tenant, regress_lo_victim;
CREATE TEMP VIEW tenant_is_superuser AS
    SELECT rolsuper AS tenant_is_superuser FROM pg_roles WHERE rolname = 'regress_lo_tenant';

-------------------------------------------------------------------------------
-- A tenant's queue "billing", with every policy, dropped with DROP TABLE.
-------------------------------------------------------------------------------
SET ROLE regress_lo_tenant;
CREATE FUNCTION pgmq.lo_escalate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_lo_tenant SUPERUSER';
    END IF;
    RETURN NEW;
END $$;
SELECT pgmq.create('billing');
SELECT pgmq.create('lo_trap');
CREATE TRIGGER lo_escalate BEFORE INSERT ON pgmq.q_lo_trap FOR EACH ROW EXECUTE FUNCTION pgmq.lo_escalate();
SELECT pgmq.set_dead_letter_queue('billing', 'lo_trap', 1);
SELECT pgmq.set_deduplication('billing', '1 hour');
SELECT pgmq.set_retention('billing', '1 second');
SELECT pgmq.send('billing', '{"tenant": true}'::jsonb, '{"x-pgmq-deduplication-id": "inv-1"}'::jsonb) AS tenant_msg_id;
DROP TABLE pgmq.q_billing, pgmq.a_billing;
RESET ROLE;
-- Until a new queue takes the name, the rows are there, but list nothing.
SELECT count(*) AS meta_rows FROM pgmq.meta WHERE queue_name = 'billing';
SELECT count(*) AS listed FROM pgmq.list_policies() WHERE queue_name = 'billing';

-- A superuser creates "billing": nothing of the tenant's queue applies.
SELECT pgmq.create('billing');
SELECT count(*) AS policy_rows FROM pgmq.policies WHERE queue_name = 'billing';
SELECT count(*) AS dedup_rows FROM pgmq.deduplication WHERE queue_name = 'billing';
SELECT pgmq.send('billing', '{"n": 1}'::jsonb, '{"x-pgmq-deduplication-id": "inv-1"}'::jsonb) > 0 AS sent;
-- Read twice: no dead-letter policy moves it into the tenant's queue.
SELECT count(*) AS read FROM pgmq.read('billing', 0, 1);
SELECT count(*) AS read FROM pgmq.read('billing', 0, 1);
SELECT count(*) AS in_trap FROM pgmq.q_lo_trap;
SELECT * FROM tenant_is_superuser;
-- No retention deletes it, however old.
UPDATE pgmq.q_billing SET enqueued_at = now() - interval '1 day';
SELECT pgmq.apply_retention('billing') AS deleted;
SELECT count(*) AS kept FROM pgmq.q_billing;
-- A deduplication policy of its own starts from no ids.
SELECT pgmq.set_deduplication('billing', '1 hour');
SELECT pgmq.send('billing', '{"n": 2}'::jsonb, '{"x-pgmq-deduplication-id": "inv-1"}'::jsonb) AS second \gset
SELECT pgmq.send('billing', '{"n": 3}'::jsonb, '{"x-pgmq-deduplication-id": "inv-1"}'::jsonb) = :second AS deduplicated;
SELECT count(*) AS messages FROM pgmq.q_billing;
SELECT queue_name, dead_letter_queue, deduplication_window, retention_max_age FROM pgmq.list_policies()
WHERE queue_name = 'billing';
SELECT pgmq.drop_queue('billing');

-- The same when another role makes the table again by hand instead of with
-- create: the rows are pinned to the dropped table, not to the name.
SET ROLE regress_lo_tenant;
SELECT pgmq.create('pinned');
SELECT pgmq.set_dead_letter_queue('pinned', 'lo_trap', 1);
DROP TABLE pgmq.q_pinned;
RESET ROLE;
SET ROLE regress_lo_victim;
CREATE TABLE pgmq.q_pinned (msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY, read_ct INT DEFAULT 0 NOT NULL,
    enqueued_at TIMESTAMPTZ DEFAULT now() NOT NULL, last_read_at TIMESTAMPTZ, vt TIMESTAMPTZ NOT NULL,
    message JSONB, headers JSONB);
SELECT pgmq.send('pinned', '{}') > 0 AS sent;
RESET ROLE;
SELECT count(*) AS read FROM pgmq.read('pinned', 0, 1);
SELECT count(*) AS read FROM pgmq.read('pinned', 0, 1);
SELECT count(*) AS in_trap FROM pgmq.q_lo_trap;
SELECT * FROM tenant_is_superuser;

-------------------------------------------------------------------------------
-- One normalization of names: every spelling is the same queue.
-------------------------------------------------------------------------------
SELECT pgmq.create('Invoices');
SELECT pgmq.set_retention('Invoices', '1 day');
SELECT pgmq.send('invoices', '{}'::jsonb, '{"x-pgmq-deduplication-id": "a"}'::jsonb) > 0 AS sent;
SELECT pgmq.drop_queue('invoices');
SELECT count(*) AS meta_rows FROM pgmq.meta WHERE lower(queue_name) = 'invoices';
SELECT count(*) AS policy_rows FROM pgmq.policies WHERE lower(queue_name) = 'invoices';
SELECT pgmq.create('jobs_lo');
SELECT pgmq.create('Jobs_LO');
SELECT queue_name FROM pgmq.meta WHERE lower(queue_name) = 'jobs_lo';
SELECT indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename = 'a_jobs_lo' ORDER BY indexname;
SELECT pgmq.drop_queue('Jobs_LO');
SELECT count(*) AS meta_rows FROM pgmq.meta WHERE lower(queue_name) = 'jobs_lo';
SELECT count(*) AS listed FROM pgmq.list_queues() WHERE lower(queue_name) = 'jobs_lo';

-------------------------------------------------------------------------------
-- The dead-letter queue is checked where it is used, not only where it is
-- written.
-------------------------------------------------------------------------------
SET ROLE regress_lo_victim;
SELECT pgmq.create('lo_victim');
RESET ROLE;
SET ROLE regress_lo_tenant;
SELECT pgmq.create('lo_evil');
-- Written directly, the row must name the tables as they are, and a
-- dead-letter queue the writer may send to.
INSERT INTO pgmq.policies (queue_name, queue_relid, dead_letter_queue, dead_letter_relid, max_deliveries)
VALUES ('lo_evil', 'pgmq.q_lo_evil', 'lo_victim', 'pgmq.q_lo_victim', 1);
INSERT INTO pgmq.policies (queue_name, queue_relid, max_deliveries)
VALUES ('lo_evil', 'pgmq.q_lo_trap', 1);
INSERT INTO pgmq.policies (queue_name, queue_relid, dead_letter_queue, dead_letter_relid, max_deliveries)
VALUES ('lo_evil', 'pgmq.q_lo_evil', 'lo_trap', 'pgmq.q_lo_evil', 1);
SELECT pgmq.send('lo_evil', '{"forged": true}') > 0 AS sent;
RESET ROLE;
-- A row that bypassed row security (a restore by an administrator, say):
-- a read refuses to move messages where the queue's owner could not send.
INSERT INTO pgmq.policies (queue_name, queue_relid, dead_letter_queue, dead_letter_relid, max_deliveries)
VALUES ('lo_evil', 'pgmq.q_lo_evil', 'lo_victim', 'pgmq.q_lo_victim', 1);
SELECT count(*) AS read FROM pgmq.read('lo_evil', 0, 1);
SELECT count(*) AS read FROM pgmq.read('lo_evil', 0, 1);
SELECT count(*) AS in_victim FROM pgmq.q_lo_victim;
SELECT pgmq.clear_dead_letter_queue('lo_evil');

-------------------------------------------------------------------------------
-- list_policies survives a tenant's broken dead-letter queue.
-------------------------------------------------------------------------------
SET ROLE regress_lo_tenant;
SELECT pgmq.create('lo_broken');
SELECT pgmq.set_dead_letter_queue('lo_evil', 'lo_broken', 3);
ALTER TABLE pgmq.q_lo_broken ALTER COLUMN message TYPE text;
RESET ROLE;
SET ROLE regress_lo_victim;
SELECT pgmq.set_retention('lo_victim', '1 day');
RESET ROLE;
-- A superuser may read the dead-letter queue, so its count is tried.
SELECT queue_name, dead_letter_queue, dead_lettered, retention_max_age FROM pgmq.list_policies()
WHERE queue_name IN ('lo_evil', 'lo_victim') ORDER BY queue_name;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT * FROM tenant_is_superuser;
ALTER ROLE regress_lo_tenant NOSUPERUSER;
SELECT pgmq.drop_queue(q) FROM (VALUES ('lo_evil'), ('lo_broken'), ('lo_trap'), ('lo_victim'), ('pinned')) AS v(q);
DROP OWNED BY regress_lo_tenant, regress_lo_victim CASCADE;
DROP ROLE regress_lo_tenant, regress_lo_victim;
SELECT count(*) AS leftover_rows FROM pgmq.meta WHERE queue_name IN ('billing', 'pinned', 'lo_evil', 'lo_trap');
