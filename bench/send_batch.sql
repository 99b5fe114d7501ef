-- 100 messages per transaction.
SELECT * FROM pgmq.send_batch(:q, array_fill(:payload::jsonb, ARRAY[100]));
