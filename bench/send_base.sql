INSERT INTO base.q_bq (vt, message) VALUES (now(), :payload) RETURNING msg_id;
