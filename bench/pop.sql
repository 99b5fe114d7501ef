-- Delete and return the oldest visible message.
SELECT * FROM pgmq.pop(:q);
