-- Drains a backlog fast, through the API: read 100, delete them.
SELECT count(*) FROM pgmq.delete(:q, ARRAY(SELECT msg_id FROM pgmq.read(:q, 30, 100)));
