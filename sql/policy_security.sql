-- policy_security: a role that owns one queue cannot set, clear or read
-- around the policies of another's queue, cannot name a dead-letter queue it
-- may not insert into, and cannot read or plant another queue's
-- deduplication ids; readers move dead letters with their own rights.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

CREATE ROLE regress_pol_tenant;
CREATE ROLE regress_pol_victim;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_pol_tenant, regress_pol_victim;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_pol_tenant, regress_pol_victim;

SET ROLE regress_pol_victim;
SELECT pgmq.create('pol_victim');
SELECT pgmq.create('pol_victim_dead');
SELECT pgmq.set_deduplication('pol_victim', '1 hour');
SELECT pgmq.send('pol_victim', '{"pay": 100}', '{"x-pgmq-deduplication-id": "pay-1"}'::jsonb) > 0 AS sent;
RESET ROLE;

SET ROLE regress_pol_tenant;
SELECT pgmq.create('pol_tenant');
-- Not the tenant's queue: no policy can be set or cleared on it.
SELECT pgmq.set_dead_letter_queue('pol_victim', 'pol_tenant', 1);
SELECT pgmq.set_retention('pol_victim', '1 s');
SELECT pgmq.set_deduplication('pol_victim', '1 s');
SELECT pgmq.set_retry_backoff('pol_victim', 1, 1);
SELECT pgmq.clear_deduplication('pol_victim');
-- Nor through the table.
INSERT INTO pgmq.policies (queue_name, retention_max_age) VALUES ('pol_victim', '1 s');
UPDATE pgmq.policies SET deduplication_window = NULL WHERE queue_name = 'pol_victim';
DELETE FROM pgmq.policies WHERE queue_name = 'pol_victim';
-- Its own queue cannot move messages into a queue it may not insert into.
SELECT pgmq.set_dead_letter_queue('pol_tenant', 'pol_victim_dead', 1);
-- Another queue's deduplication ids are invisible and cannot be planted.
SELECT count(*) AS visible_ids FROM pgmq.deduplication;
INSERT INTO pgmq.deduplication VALUES ('pol_victim', 'pay-2', 1, now() + interval '1 day');
-- Its own policies work.
SELECT pgmq.set_retention('pol_tenant', '1 day');
SELECT queue_name, retention_max_age FROM pgmq.list_policies() ORDER BY 1;
RESET ROLE;

-- The victim's payment id was not replaced; its policy is untouched.
SELECT queue_name, deduplication_id FROM pgmq.deduplication ORDER BY 1, 2;
SELECT queue_name, deduplication_window FROM pgmq.policies ORDER BY 1;

-- A sender with only a send's privileges (INSERT, SELECT) sends duplicates
-- too: a duplicate inserts nothing, so there is nothing it must delete.
CREATE ROLE regress_pol_sender;
GRANT USAGE ON SCHEMA pgmq TO regress_pol_sender;
SET ROLE regress_pol_victim;
GRANT SELECT, INSERT ON pgmq.q_pol_victim TO regress_pol_sender;
RESET ROLE;
SET ROLE regress_pol_sender;
SELECT pgmq.send('pol_victim', '{"pay": 100}', '{"x-pgmq-deduplication-id": "pay-1"}'::jsonb)
       = (SELECT msg_id FROM pgmq.deduplication WHERE deduplication_id = 'pay-1') AS first_msg_id;
SELECT count(DISTINCT s) AS ids FROM pgmq.send_batch('pol_victim', ARRAY['{"pay": 5}', '{"pay": 5}', '{"pay": 100}']::jsonb[],
    ARRAY['{"x-pgmq-deduplication-id": "pay-5"}', '{"x-pgmq-deduplication-id": "pay-5"}',
          '{"x-pgmq-deduplication-id": "pay-1"}']::jsonb[]) AS s;
SELECT deduplication_id FROM pgmq.deduplication ORDER BY 1;
RESET ROLE;
SELECT message FROM pgmq.q_pol_victim ORDER BY msg_id;
SET ROLE regress_pol_victim;
REVOKE ALL ON pgmq.q_pol_victim FROM regress_pol_sender;
RESET ROLE;
REVOKE ALL ON SCHEMA pgmq FROM regress_pol_sender;
DROP ROLE regress_pol_sender;

-- A reader without INSERT on the dead-letter queue cannot read past the
-- limit: it gets an error, and nothing is lost.
SET ROLE regress_pol_victim;
SELECT pgmq.set_dead_letter_queue('pol_victim', 'pol_victim_dead', 1);
GRANT SELECT, UPDATE, DELETE ON pgmq.q_pol_victim TO regress_pol_tenant;
SELECT count(*) FROM pgmq.read('pol_victim', 0, 1);
RESET ROLE;
SET ROLE regress_pol_tenant;
SELECT count(*) FROM pgmq.read('pol_victim', 0, 1);
RESET ROLE;
SELECT count(*) AS in_queue, (SELECT count(*) FROM pgmq.q_pol_victim_dead) AS in_dlq FROM pgmq.q_pol_victim;

-- Maintenance by a role without the owner's privileges skips the queue.
SET ROLE regress_pol_tenant;
CALL pgmq.run_partition_maintenance();
RESET ROLE;

-- A superuser's maintenance applies the tenant's retention as the tenant
-- (its trigger sees the tenant, under a restricted operation), never as
-- superuser.
SET ROLE regress_pol_tenant;
CREATE TABLE pgmq.pol_tenant_log (who text, superuser boolean);
CREATE FUNCTION pgmq.pol_tenant_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pgmq.pol_tenant_log
        SELECT current_user, rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
    RETURN OLD;
END $$;
CREATE TRIGGER record_delete AFTER DELETE ON pgmq.q_pol_tenant FOR EACH ROW EXECUTE FUNCTION pgmq.pol_tenant_record();
SELECT pgmq.send('pol_tenant', '{"old": true}') > 0 AS sent;
UPDATE pgmq.q_pol_tenant SET enqueued_at = now() - interval '2 days';
RESET ROLE;
CALL pgmq.run_partition_maintenance();
SELECT who, superuser FROM pgmq.pol_tenant_log;
SELECT count(*) AS left_in_tenant_queue FROM pgmq.q_pol_tenant;
DROP TABLE pgmq.pol_tenant_log;
DROP FUNCTION pgmq.pol_tenant_record() CASCADE;

SET ROLE regress_pol_victim;
SELECT pgmq.drop_queue('pol_victim');
SELECT pgmq.drop_queue('pol_victim_dead');
RESET ROLE;
SET ROLE regress_pol_tenant;
SELECT pgmq.drop_queue('pol_tenant');
RESET ROLE;
SELECT count(*) AS policies, (SELECT count(*) FROM pgmq.deduplication) AS ids FROM pgmq.policies;
REVOKE ALL ON pgmq.meta FROM regress_pol_tenant, regress_pol_victim;
REVOKE ALL ON SCHEMA pgmq FROM regress_pol_tenant, regress_pol_victim;
DROP ROLE regress_pol_tenant;
DROP ROLE regress_pol_victim;
