INSERT INTO base.q_bq (vt, message)
SELECT now(), m FROM unnest(array_fill(:payload::jsonb, ARRAY[100])) AS m RETURNING msg_id;
