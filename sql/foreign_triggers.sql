-- foreign_triggers: pgmq's trigger functions read the rows of the table they
-- are attached to. A role with nothing but grant_queue_access on one queue
-- attaches them elsewhere (a temp table, another queue): each refuses with a
-- clear ERROR instead of misreading the rows (issue 24: a segfault that reset
-- every session).
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE regress_ft_user;
SELECT pgmq.create('ft_own');
SELECT pgmq.create('ft_other');
SELECT pgmq.grant_queue_access('ft_own', 'regress_ft_user');

SET ROLE regress_ft_user;
CREATE TEMP TABLE ft_rows (n int);
CREATE TRIGGER ft_policy AFTER INSERT ON ft_rows FOR EACH ROW EXECUTE FUNCTION pgmq._invalidate_queue_policy();
INSERT INTO ft_rows VALUES (1);
DROP TRIGGER ft_policy ON ft_rows;
CREATE TRIGGER ft_policy_stmt AFTER INSERT ON ft_rows FOR EACH STATEMENT EXECUTE FUNCTION pgmq._invalidate_queue_policy();
INSERT INTO ft_rows VALUES (2);
DROP TRIGGER ft_policy_stmt ON ft_rows;
-- The notification trigger, for a queue whose table this is not.
CREATE TRIGGER ft_notify AFTER INSERT ON ft_rows FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners('ft_other');
INSERT INTO ft_rows VALUES (3);
DROP TRIGGER ft_notify ON ft_rows;
CREATE TRIGGER ft_notify_noarg AFTER INSERT ON ft_rows FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners();
INSERT INTO ft_rows VALUES (4);
DROP TABLE ft_rows;
RESET ROLE;
-- The queue's owner puts another queue's notification trigger on its table.
CREATE TRIGGER ft_notify_other AFTER INSERT ON pgmq.q_ft_own FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners('ft_other');
SELECT pgmq.send('ft_own', '{}');
DROP TRIGGER ft_notify_other ON pgmq.q_ft_own;
-- Still a server, and the functions still work where they belong.
SELECT pgmq.enable_notify_insert('ft_own');
SELECT pgmq.send('ft_own', '{}') AS sent;
SELECT pgmq.set_retention('ft_own', '1 day');
SELECT queue_name, retention_max_age FROM pgmq.list_policies() WHERE queue_name = 'ft_own';

SELECT pgmq.drop_queue('ft_own');
SELECT pgmq.drop_queue('ft_other');
DROP OWNED BY regress_ft_user;
DROP ROLE regress_ft_user;
