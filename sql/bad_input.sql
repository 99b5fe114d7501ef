-- bad_input: no input may crash a backend or corrupt other queues; each
-- failure is one ERROR with a useful SQLSTATE (DESIGN.md, "Rules of the
-- boundary"). pg_temp.try() runs one statement in a subtransaction and
-- prints "ok: <rows>" or "ERROR <SQLSTATE>: <message>".
--
-- Where this extension is stricter than upstream pgmq (NULL qty/delay/vt,
-- NULL queue names, negative qty, an empty queue name), the result below is
-- the extension's deliberate behaviour; API.md §2.4 lists upstream's.
\pset null '<NULL>'
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
	n bigint;
BEGIN
	-- count(s), not count(*): the whole row must be computed, or the planner
	-- would skip calling an IMMUTABLE function whose value is unused.
	EXECUTE 'SELECT count(s) FROM (' || stmt || ') AS s' INTO n;
	RETURN 'ok: ' || n || ' row(s)';
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END
$fn$;

-- A bystander queue that must come through everything untouched.
SELECT pgmq.create('bi_keep');
SELECT count(*) FROM pgmq.send_batch('bi_keep', ARRAY['{"keep": 1}', '{"keep": 2}']::jsonb[], ARRAY['{"h": 1}', '{"h": 2}']::jsonb[]);
SELECT pgmq.create('bi_q');
SELECT pgmq.send('bi_q', '{"first": true}') AS first_id \gset

-------------------------------------------------------------------------------
-- NULL in every argument of every function.
-------------------------------------------------------------------------------
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.create(NULL)$$),
	($$SELECT pgmq.create_non_partitioned(NULL)$$),
	($$SELECT pgmq.create_unlogged(NULL)$$),
	($$SELECT pgmq.drop_queue(NULL)$$),
	($$SELECT pgmq.drop_queue(NULL, true)$$),
	($$SELECT pgmq.purge_queue(NULL)$$),
	($$SELECT pgmq.detach_archive(NULL)$$),
	($$SELECT pgmq.validate_queue_name(NULL)$$),
	($$SELECT pgmq.format_table_name(NULL, 'q')$$),
	($$SELECT pgmq.format_table_name('bi_q', NULL)$$),
	($$SELECT pgmq.acquire_queue_lock(NULL)$$),
	($$SELECT * FROM pgmq.metrics(NULL)$$)
) AS v(stmt);
-- format_table_name is IMMUTABLE; its NULL cases once more outside try().
SELECT pgmq.format_table_name(NULL, 'q');
SELECT pgmq.format_table_name('bi_q', NULL);
-- The deprecated drop_queue ignores its second argument.
SELECT pgmq.drop_queue('bi_never_created', NULL);

SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.send(NULL, '{}')$$),
	($$SELECT pgmq.send('bi_q', NULL)$$),
	($$SELECT pgmq.send(NULL, '{}', '{}'::jsonb)$$),
	($$SELECT pgmq.send('bi_q', NULL, '{}'::jsonb)$$),
	($$SELECT pgmq.send('bi_q', '{}', NULL::jsonb)$$),
	($$SELECT pgmq.send(NULL, '{}', 0)$$),
	($$SELECT pgmq.send('bi_q', NULL, 0)$$),
	($$SELECT pgmq.send('bi_q', '{}', NULL::integer)$$),
	($$SELECT pgmq.send(NULL, '{}', now())$$),
	($$SELECT pgmq.send('bi_q', NULL, now())$$),
	($$SELECT pgmq.send('bi_q', '{}', NULL::timestamptz)$$),
	($$SELECT pgmq.send(NULL, '{}', '{}'::jsonb, 0)$$),
	($$SELECT pgmq.send('bi_q', NULL, '{}'::jsonb, 0)$$),
	($$SELECT pgmq.send('bi_q', '{}', NULL::jsonb, 0)$$),
	($$SELECT pgmq.send('bi_q', '{}', '{}'::jsonb, NULL::integer)$$),
	($$SELECT pgmq.send(NULL, '{}', '{}'::jsonb, now())$$),
	($$SELECT pgmq.send('bi_q', NULL, '{}'::jsonb, now())$$),
	($$SELECT pgmq.send('bi_q', '{}', NULL::jsonb, now())$$),
	($$SELECT pgmq.send('bi_q', '{}', '{}'::jsonb, NULL::timestamptz)$$),
	($$SELECT pgmq.send('bi_q', NULL, NULL::jsonb, NULL::timestamptz)$$)
) AS v(stmt);

SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', NULL::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[NULL]::jsonb[])$$),
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', NULL, ARRAY['{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], NULL::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], ARRAY[NULL]::jsonb[])$$),
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', NULL::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], NULL::integer)$$),
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', NULL::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], NULL::timestamptz)$$),
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', NULL, ARRAY['{}']::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], NULL::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[], NULL::integer)$$),
	($$SELECT pgmq.send_batch(NULL, ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', NULL, ARRAY['{}']::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], NULL::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[], NULL::timestamptz)$$)
) AS v(stmt);

SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT * FROM pgmq.read(NULL, 0, 1)$$),
	($$SELECT * FROM pgmq.read('bi_q', NULL, 1)$$),
	($$SELECT * FROM pgmq.read('bi_q', 0, NULL)$$),
	($$SELECT * FROM pgmq.read('bi_q', 0, 1, NULL)$$),
	($$SELECT * FROM pgmq.read_with_poll(NULL, 0, 1, 1, 10)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', NULL, 1, 1, 10)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, NULL, 1, 10)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, 1, NULL, 10)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, 1, 1, NULL)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, 1, 1, 10, NULL)$$),
	($$SELECT * FROM pgmq.pop(NULL)$$),
	($$SELECT * FROM pgmq.pop(NULL, 1)$$),
	($$SELECT * FROM pgmq.pop('bi_q', NULL)$$)
) AS v(stmt);

-- A NULL id matches no message; a NULL array matches none.
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.delete(NULL, 1::bigint)$$),
	($$SELECT pgmq.delete('bi_q', NULL::bigint)$$),
	($$SELECT pgmq.delete(NULL, ARRAY[1]::bigint[])$$),
	($$SELECT pgmq.delete('bi_q', NULL::bigint[])$$),
	($$SELECT pgmq.delete('bi_q', ARRAY[NULL]::bigint[])$$),
	($$SELECT pgmq.archive(NULL, 1::bigint)$$),
	($$SELECT pgmq.archive('bi_q', NULL::bigint)$$),
	($$SELECT pgmq.archive(NULL, ARRAY[1]::bigint[])$$),
	($$SELECT pgmq.archive('bi_q', NULL::bigint[])$$),
	($$SELECT pgmq.archive('bi_q', ARRAY[NULL]::bigint[])$$),
	($$SELECT * FROM pgmq.set_vt(NULL, 1::bigint, 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', NULL::bigint, 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', 1::bigint, NULL::integer)$$),
	($$SELECT * FROM pgmq.set_vt(NULL, 1::bigint, now())$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', NULL::bigint, now())$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', 1::bigint, NULL::timestamptz)$$),
	($$SELECT * FROM pgmq.set_vt(NULL, ARRAY[1]::bigint[], 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', NULL::bigint[], 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', ARRAY[NULL]::bigint[], 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', ARRAY[1]::bigint[], NULL::integer)$$),
	($$SELECT * FROM pgmq.set_vt(NULL, ARRAY[1]::bigint[], now())$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', NULL::bigint[], now())$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', ARRAY[1]::bigint[], NULL::timestamptz)$$)
) AS v(stmt);

-- What the NULL sends above stored: NULL messages and NULL headers.
SELECT message, headers, count(*) FROM pgmq.q_bi_q GROUP BY 1, 2 ORDER BY 1, 2;
SELECT pgmq.purge_queue('bi_q') > 0 AS purged;

-------------------------------------------------------------------------------
-- Negative and extreme numbers.
-------------------------------------------------------------------------------
SELECT pgmq.send('bi_q', '{"n": 1}') AS first_id \gset
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT * FROM pgmq.read('bi_q', 0, -1)$$),
	($$SELECT * FROM pgmq.read('bi_q', 0, -2147483648)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, -1, 1, 10)$$),
	($$SELECT * FROM pgmq.read_with_poll('bi_q', 0, 1, 1, -1)$$),
	($$SELECT * FROM pgmq.pop('bi_q', -1)$$),
	-- qty as large as an int goes: the whole queue.
	($$SELECT * FROM pgmq.read('bi_q', 0, 2147483647)$$),
	-- A bigint qty matches no overload: PostgreSQL's error, before any call.
	($$SELECT * FROM pgmq.read('bi_q', 0, 2147483648)$$)
) AS v(stmt);

-- The largest vt: invisible for 68 years; no overflow anywhere.
SELECT msg_id - :first_id AS rel_id, vt > now() + interval '68 years' AS vt_68_years_ahead
  FROM pgmq.read('bi_q', 2147483647, 1);
SELECT msg_id - :first_id AS rel_id, vt > now() + interval '68 years' AS vt_68_years_ahead
  FROM pgmq.set_vt('bi_q', :first_id, 2147483647);
SELECT msg_id - :first_id AS rel_id, vt > now() + interval '68 years' AS vt_68_years_ahead
  FROM pgmq.set_vt('bi_q', ARRAY[:first_id]::bigint[], 2147483647);
SELECT pgmq.send('bi_q', '{"n": 2}', 2147483647) - :first_id AS rel_id;
SELECT pgmq.send('bi_q', '{"n": 3}', '{}'::jsonb, 2147483647) - :first_id AS rel_id;
SELECT count(*) FROM pgmq.send_batch('bi_q', ARRAY['{"n": 4}']::jsonb[], 2147483647);
SELECT message, vt > now() + interval '68 years' AS vt_68_years_ahead FROM pgmq.q_bi_q ORDER BY msg_id;
SELECT count(*) AS visible FROM pgmq.read('bi_q', 0, 10);
-- The smallest: 68 years in the past, visible at once.
SELECT msg_id - :first_id AS rel_id, vt < now() - interval '68 years' AS vt_68_years_ago
  FROM pgmq.set_vt('bi_q', :first_id, -2147483648);
SELECT msg_id - :first_id AS rel_id, vt < now() - interval '68 years' AS vt_68_years_ago
  FROM pgmq.read('bi_q', -2147483648, 1);
SELECT pgmq.send('bi_q', '{"n": 5}', -2147483648) - :first_id AS rel_id;
SELECT msg_id - :first_id AS rel_id FROM pgmq.read('bi_q', 30, 10) ORDER BY msg_id;
-- infinity is a valid timestamptz: never visible / always visible.
SELECT pgmq.send('bi_q', '{"n": "inf"}', 'infinity'::timestamptz) - :first_id AS rel_id;
SELECT pgmq.send('bi_q', '{"n": "-inf"}', '-infinity'::timestamptz) - :first_id AS rel_id;
SELECT message FROM pgmq.read('bi_q', 30, 10);
SELECT msg_id - :first_id AS rel_id, vt FROM pgmq.set_vt('bi_q', :first_id, 'infinity'::timestamptz);
-- Huge poll arguments: returns at once when a message is visible; the
-- interval never outlasts max_poll_seconds.
SELECT count(*) FROM pgmq.set_vt('bi_q', :first_id, 0);
SELECT count(*) FROM pgmq.read_with_poll('bi_q', 30, 1, 2147483647, 2147483647);
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) FROM pgmq.read_with_poll('bi_q', 30, 1, 1, 2147483647);
SELECT clock_timestamp() - :'t0'::timestamptz < interval '3 seconds' AS capped_by_max_poll;
SELECT pgmq.purge_queue('bi_q') > 0 AS purged;

-------------------------------------------------------------------------------
-- Empty, mismatched and odd arrays.
-------------------------------------------------------------------------------
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', '{}'::jsonb[], '{}'::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[], ARRAY[]::jsonb[], 0)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[], ARRAY[]::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{}']::jsonb[], ARRAY['{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}']::jsonb[], ARRAY['{}', '{}', '{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{}']::jsonb[], ARRAY[]::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[]::jsonb[], ARRAY['{}']::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{}']::jsonb[], ARRAY['{}']::jsonb[], 5)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{}']::jsonb[], ARRAY['{}']::jsonb[], now())$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY[['{}', '{}'], ['{}', '{}']]::jsonb[])$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{}']::jsonb[], ARRAY[['{}'], ['{}']]::jsonb[])$$),
	($$SELECT pgmq.delete('bi_q', ARRAY[]::bigint[])$$),
	($$SELECT pgmq.archive('bi_q', ARRAY[]::bigint[])$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', ARRAY[]::bigint[], 0)$$),
	($$SELECT * FROM pgmq.set_vt('bi_q', ARRAY[]::bigint[], now())$$)
) AS v(stmt);
-- Nothing was inserted by the failures above.
SELECT count(*) FROM pgmq.q_bi_q;
-- An array with other bounds is still taken in order.
SELECT count(*) FROM pgmq.send_batch('bi_q', '[5:6]={"{\"b\": 5}","{\"b\": 6}"}'::jsonb[], '[0:1]={"{\"h\": 0}","{\"h\": 1}"}'::jsonb[]);
SELECT message, headers FROM pgmq.q_bi_q ORDER BY msg_id;
SELECT pgmq.purge_queue('bi_q') > 0 AS purged;

-------------------------------------------------------------------------------
-- Injected and odd queue names. Forbidden characters ($ ; -- ') fail before
-- any SQL is built; everything else is quoted as an identifier.
-------------------------------------------------------------------------------
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.create('x''; DROP TABLE pgmq.meta; --')$$),
	($$SELECT pgmq.create_unlogged('x''; DROP TABLE pgmq.meta; --')$$),
	($$SELECT pgmq.send('x''; DROP TABLE pgmq.meta; --', '{}')$$),
	($$SELECT * FROM pgmq.read('x''; DROP TABLE pgmq.meta; --', 0, 1)$$),
	($$SELECT pgmq.drop_queue('x''; DROP TABLE pgmq.meta; --')$$),
	($$SELECT pgmq.purge_queue('x''; DROP TABLE pgmq.meta; --')$$),
	($$SELECT * FROM pgmq.metrics('x''; DROP TABLE pgmq.meta; --')$$),
	($$SELECT pgmq.create('x"; DROP TABLE pgmq.meta; --')$$),
	($$SELECT pgmq.create('bi_q; DROP TABLE pgmq.meta')$$),
	($$SELECT pgmq.create('bi_q -- comment')$$),
	($$SELECT pgmq.create('$$ || '$' || $$1')$$),
	($$SELECT pgmq.create('')$$),
	($$SELECT pgmq.send('', '{}')$$)
) AS v(stmt);

-- Double quotes, backslashes and spaces are legal names; each maps to its own
-- quoted tables.
SELECT pgmq.create('a"b');
SELECT pgmq.create('bi" OR "1"="1');
SELECT pgmq.create('bi\x y');
SELECT relname FROM pg_class
 WHERE relnamespace = 'pgmq'::regnamespace AND relkind = 'r' AND relname IN
       ('q_a"b', 'a_a"b', 'q_bi" or "1"="1', 'a_bi" or "1"="1', 'q_bi\x y', 'a_bi\x y')
 ORDER BY relname COLLATE "C";
SELECT pgmq.send('a"b', '{"q": "a\"b"}') > 0 AS sent;
SELECT pgmq.send('bi" OR "1"="1', '{"q": "or"}') > 0 AS sent;
SELECT pgmq.send('bi\x y', '{"q": "backslash"}') > 0 AS sent;
SELECT message FROM pgmq.read('a"b', 30, 10);
SELECT message FROM pgmq.read('bi" OR "1"="1', 30, 10);
SELECT message FROM pgmq.pop('bi\x y');
SELECT queue_name, queue_length FROM pgmq.metrics('a"b');
SELECT pgmq.archive('a"b', ARRAY(SELECT msg_id FROM pgmq."q_a""b")) IS NOT NULL AS archived;
SELECT message FROM pgmq."a_a""b";
SELECT pgmq.drop_queue('a"b');
SELECT pgmq.drop_queue('bi" OR "1"="1');
SELECT pgmq.drop_queue('bi\x y');

-- A table in the way that is not a queue: the statement fails cleanly, and a
-- real queue of that name works once the table is gone.
CREATE TABLE pgmq.q_bi_fake (x int);
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.send('bi_fake', '{}')$$),
	($$SELECT * FROM pgmq.read('bi_fake', 0, 1)$$),
	($$SELECT * FROM pgmq.metrics('bi_fake')$$)
) AS v(stmt);
DROP TABLE pgmq.q_bi_fake;
SELECT pgmq.create('bi_fake');
SELECT pgmq.send('bi_fake', '{"real": true}') > 0 AS sent;
SELECT message FROM pgmq.read('bi_fake', 30, 1);
SELECT pgmq.drop_queue('bi_fake');

-------------------------------------------------------------------------------
-- Non-object and invalid JSON.
-------------------------------------------------------------------------------
SELECT count(*) FROM pgmq.send_batch('bi_q', ARRAY['null', '[]', '[1, {"a": 2}]', '"text"', '42', '-1.5e10', 'true', '{}']::jsonb[]);
SELECT pgmq.send('bi_q', '{"h": "scalar headers"}', '"just a string"'::jsonb) > 0 AS sent;
SELECT pgmq.send('bi_q', '{"h": "json null headers"}', 'null'::jsonb) > 0 AS sent;
SELECT jsonb_typeof(message) AS type, message, headers FROM pgmq.read('bi_q', 30, 20) ORDER BY msg_id;
SELECT count(*) FROM pgmq.set_vt('bi_q', ARRAY(SELECT msg_id FROM pgmq.q_bi_q), 0);
-- Non-object conditionals are containment like any other.
SELECT jsonb_typeof(message) AS type, message FROM pgmq.read('bi_q', 0, 20, 'null') ORDER BY msg_id;
SELECT jsonb_typeof(message) AS type, message FROM pgmq.read('bi_q', 0, 20, '42') ORDER BY msg_id;
SELECT jsonb_typeof(message) AS type, message FROM pgmq.read('bi_q', 0, 20, '[{"a": 2}]') ORDER BY msg_id;
-- Invalid JSON never reaches the extension: PostgreSQL rejects the literal.
SELECT stmt, pg_temp.try(stmt) AS result FROM (VALUES
	($$SELECT pgmq.send('bi_q', '{bad json')$$),
	($$SELECT pgmq.send('bi_q', '{}', '{"h": }'::jsonb)$$),
	($$SELECT pgmq.send_batch('bi_q', ARRAY['{}', '{oops']::jsonb[])$$),
	($$SELECT * FROM pgmq.read('bi_q', 0, 1, '{nope')$$)
) AS v(stmt);
SELECT pgmq.purge_queue('bi_q') > 0 AS purged;

-------------------------------------------------------------------------------
-- A ~50 MB payload goes in and comes back whole.
-------------------------------------------------------------------------------
SELECT pgmq.send('bi_q', jsonb_build_object('data', repeat('x', 50 * 1024 * 1024), 'tail', 'end'),
                 jsonb_build_object('size', 50 * 1024 * 1024)) AS big_id \gset
SELECT msg_id = :big_id AS same_id, length(message->>'data') AS data_length, message->>'tail' AS tail,
       headers, octet_length(message::text) AS text_bytes
  FROM pgmq.read('bi_q', 0, 1);
SELECT length(message->>'data') AS data_length FROM pgmq.pop('bi_q');
SELECT count(*) FROM pgmq.q_bi_q;

-------------------------------------------------------------------------------
-- Errors inside an explicit transaction abort only that transaction.
-------------------------------------------------------------------------------
BEGIN;
SELECT pgmq.send('bi_q', '{"in": "aborted txn"}') > 0 AS sent;
SELECT * FROM pgmq.read('bi_q', 0, -1);
SELECT 1;
ROLLBACK;
SELECT count(*) FROM pgmq.q_bi_q;

-------------------------------------------------------------------------------
-- After all of that the session works and the bystander is intact.
-------------------------------------------------------------------------------
SELECT 1 AS still_alive;
SELECT to_regclass('pgmq.meta') IS NOT NULL AS meta_exists;
SELECT queue_name, is_partitioned, is_unlogged FROM pgmq.meta WHERE queue_name LIKE 'bi\_%' ORDER BY queue_name;
SELECT message, headers, read_ct FROM pgmq.q_bi_keep ORDER BY msg_id;
SELECT message FROM pgmq.read('bi_keep', 30, 10) ORDER BY msg_id;
SELECT pgmq.drop_queue('bi_keep');
SELECT pgmq.drop_queue('bi_q');
SELECT count(*) FROM pgmq.meta WHERE queue_name LIKE 'bi%' OR queue_name LIKE 'a"b';
