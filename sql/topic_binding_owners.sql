-- topic_binding_owners: where an administrator lets queue owners manage
-- their own topic bindings (INSERT, DELETE on pgmq.topic_bindings), each may
-- bind and unbind only its own queues, and a binding to a queue a sender may
-- not send to neither fails that sender's send_topic nor receives its
-- messages (issue 24: a tenant removed other applications' bindings, and its
-- binding of # made every other sender's send_topic fail).
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE regress_tb_app;
CREATE ROLE regress_tb_tenant;
GRANT USAGE, CREATE ON SCHEMA pgmq TO regress_tb_app, regress_tb_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.meta TO regress_tb_app, regress_tb_tenant;
GRANT SELECT, INSERT, DELETE ON pgmq.topic_bindings TO regress_tb_app, regress_tb_tenant;

SET ROLE regress_tb_app;
SELECT pgmq.create('tb_orders');
SELECT pgmq.bind_topic('orders.*', 'tb_orders');
RESET ROLE;
SET ROLE regress_tb_tenant;
SELECT pgmq.create('tb_spy');
-- Another queue's bindings: neither through the functions nor the table.
SELECT pgmq.bind_topic('#', 'tb_orders');
SELECT pgmq.unbind_topic('orders.*', 'tb_orders');
INSERT INTO pgmq.topic_bindings (pattern, queue_name) VALUES ('#', 'tb_orders');
WITH d AS (DELETE FROM pgmq.topic_bindings WHERE queue_name = 'tb_orders' RETURNING 1) SELECT count(*) AS deleted FROM d;
-- Its own queue's, as it likes.
SELECT pgmq.bind_topic('#', 'tb_spy');
RESET ROLE;
SELECT pattern, queue_name FROM pgmq.topic_bindings ORDER BY queue_name, pattern;

-- The application sends: its message goes where it may send, and the
-- tenant's binding neither fails the send nor receives a copy.
SET ROLE regress_tb_app;
SELECT pgmq.send_topic('orders.created', '{"order": 1}') AS delivered_to;
RESET ROLE;
SELECT (SELECT count(*) FROM pgmq.q_tb_orders) AS in_orders, (SELECT count(*) FROM pgmq.q_tb_spy) AS in_spy;
-- The tenant unbinds its own queue.
SET ROLE regress_tb_tenant;
SELECT pgmq.unbind_topic('#', 'tb_spy');
RESET ROLE;

SELECT pgmq.drop_queue('tb_orders');
SELECT pgmq.drop_queue('tb_spy');
REVOKE ALL ON pgmq.topic_bindings FROM regress_tb_app, regress_tb_tenant;
REVOKE ALL ON pgmq.meta FROM regress_tb_app, regress_tb_tenant;
REVOKE ALL ON SCHEMA pgmq FROM regress_tb_app, regress_tb_tenant;
DROP OWNED BY regress_tb_app, regress_tb_tenant;
DROP ROLE regress_tb_app, regress_tb_tenant;
