-- visibility: the visibility timeout and set_vt, all four overloads
-- (API.md §2.4, §2.6). One short pg_sleep covers every "becomes visible
-- again" case. msg_ids relative to the first id; times as facts only.
\pset null '<NULL>'
SELECT pgmq.create('vis_q');
SELECT min(id) AS first_id FROM pgmq.send_batch('vis_q',
       ARRAY['{"m": 0}', '{"m": 1}', '{"m": 2}', '{"m": 3}']::jsonb[]) AS t(id) \gset

-- Message 0: read with a 1-second vt; invisible until it expires.
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('vis_q', 1, 1);
-- Message 1: set_vt(q, id, int) to 1 second from now, without reading it.
SELECT msg_id - :first_id AS rel_id, read_ct, last_read_at,
       vt > clock_timestamp() AND vt <= clock_timestamp() + interval '1 second' AS vt_in_1s
  FROM pgmq.set_vt('vis_q', :first_id + 1, 1);
-- Messages 2 and 3: hidden for a long time with set_vt(q, ids[], int).
SELECT msg_id - :first_id AS rel_id, read_ct,
       vt > clock_timestamp() + interval '99 seconds' AND vt <= clock_timestamp() + interval '100 seconds' AS vt_in_100s
  FROM pgmq.set_vt('vis_q', ARRAY[:first_id + 2, :first_id + 3]::bigint[], 100) ORDER BY msg_id;
-- A send delayed by 1 second.
SELECT pgmq.send('vis_q', '{"m": "delayed"}', 1) - :first_id AS rel_id;
-- Nothing is visible now.
SELECT msg_id - :first_id AS rel_id FROM pgmq.read('vis_q', 30, 10);

SELECT pg_sleep(1.1);

-- Message 0 (its second read: read_ct 2), message 1 (its first read) and the
-- delayed send are visible again; 2 and 3 are not.
SELECT msg_id - :first_id AS rel_id, read_ct, message FROM pgmq.read('vis_q', 30, 10) ORDER BY msg_id;

-------------------------------------------------------------------------------
-- set_vt, the four overloads, on messages that are currently invisible.
-------------------------------------------------------------------------------
-- set_vt(q, id, int) with 0: visible again at once. read_ct and last_read_at
-- are not touched.
SELECT last_read_at AS m0_last_read_at FROM pgmq.q_vis_q WHERE msg_id = :first_id \gset
SELECT msg_id - :first_id AS rel_id, read_ct, last_read_at = :'m0_last_read_at'::timestamptz AS last_read_at_unchanged,
       message, vt <= clock_timestamp() AS visible
  FROM pgmq.set_vt('vis_q', :first_id, 0);
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('vis_q', 30, 10) ORDER BY msg_id;

-- set_vt(q, id, timestamptz): the value as given, in the past or the future.
SELECT msg_id - :first_id AS rel_id, vt = '2000-01-01 00:00:00+00'::timestamptz AS vt_as_given, read_ct
  FROM pgmq.set_vt('vis_q', :first_id + 1, '2000-01-01 00:00:00+00'::timestamptz);
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('vis_q', 30, 10) ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id, vt
  FROM pgmq.set_vt('vis_q', :first_id + 1, '2090-05-05 05:05:05+00'::timestamptz);

-- set_vt(q, ids[], timestamptz): batch, absolute; returns the updated rows.
SELECT msg_id - :first_id AS rel_id, vt, read_ct, message
  FROM pgmq.set_vt('vis_q', ARRAY[:first_id + 2, :first_id + 3]::bigint[], '2000-01-01 00:00:00+00'::timestamptz)
 ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('vis_q', 30, 10) ORDER BY msg_id;

-- set_vt(q, ids[], int) with 0: a batch becomes visible again.
SELECT msg_id - :first_id AS rel_id, vt <= clock_timestamp() AS visible
  FROM pgmq.set_vt('vis_q', ARRAY[:first_id, :first_id + 2]::bigint[], 0) ORDER BY msg_id;
SELECT msg_id - :first_id AS rel_id, read_ct FROM pgmq.read('vis_q', 30, 10) ORDER BY msg_id;

-- Missing ids give no row; a batch returns only the ids that exist.
SELECT count(*) FROM pgmq.set_vt('vis_q', :first_id + 1000, 0);
SELECT count(*) FROM pgmq.set_vt('vis_q', :first_id + 1000, now());
SELECT msg_id - :first_id AS rel_id
  FROM pgmq.set_vt('vis_q', ARRAY[:first_id + 1000, :first_id + 3, :first_id + 1001]::bigint[], 0);
SELECT count(*) FROM pgmq.set_vt('vis_q', ARRAY[:first_id + 1000]::bigint[], now());
-- A duplicate id in the batch updates (and returns) the row once.
SELECT msg_id - :first_id AS rel_id
  FROM pgmq.set_vt('vis_q', ARRAY[:first_id + 3, :first_id + 3]::bigint[], 0);
-- The result type of every overload is message_record.
SELECT oid::regprocedure, prorettype::regtype, proretset FROM pg_proc
 WHERE pronamespace = 'pgmq'::regnamespace AND proname = 'set_vt' ORDER BY oid::regprocedure::text;

-- set_vt on a queue that does not exist.
SELECT * FROM pgmq.set_vt('vis_missing', 1, 0);

SELECT pgmq.drop_queue('vis_q');
