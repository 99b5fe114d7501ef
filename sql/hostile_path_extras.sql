-- hostile_path_extras: FIFO group reads, insert notifications and topics
-- under a hostile search_path (privileges.sql does the same for the core
-- functions). Lookalikes of every operator, function and aggregate their
-- statements use sit before pg_catalog; each records that it was called.
-- Nothing may be captured, and the results must be the real ones.
\pset null '<NULL>'
CREATE SCHEMA regress_evil_x;
CREATE TABLE regress_evil_x.captured (what text);
CREATE FUNCTION regress_evil_x.capture(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil_x.captured VALUES (what);
END $$;
CREATE FUNCTION regress_evil_x.int8_eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('=(bigint,bigint)'); RETURN true; END $$;
CREATE OPERATOR regress_evil_x.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = regress_evil_x.int8_eq);
CREATE FUNCTION regress_evil_x.int8_ge(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('>=(bigint,bigint)'); RETURN true; END $$;
CREATE OPERATOR regress_evil_x.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = regress_evil_x.int8_ge);
CREATE FUNCTION regress_evil_x.text_eq(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('=(text,text)'); RETURN true; END $$;
CREATE OPERATOR regress_evil_x.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil_x.text_eq);
CREATE FUNCTION regress_evil_x.text_gt(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('>(text,text)'); RETURN false; END $$;
CREATE OPERATOR regress_evil_x.> (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil_x.text_gt);
CREATE FUNCTION regress_evil_x.text_match(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('~(text,text)'); RETURN true; END $$;
CREATE OPERATOR regress_evil_x.~ (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil_x.text_match);
CREATE FUNCTION regress_evil_x.ts_le(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('<=(timestamptz,timestamptz)'); RETURN true; END $$;
CREATE OPERATOR regress_evil_x.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = regress_evil_x.ts_le);
CREATE FUNCTION regress_evil_x.ts_mi(timestamptz, interval) RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('-(timestamptz,interval)'); RETURN $1; END $$;
CREATE OPERATOR regress_evil_x.- (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = regress_evil_x.ts_mi);
CREATE FUNCTION regress_evil_x.jsonb_field(jsonb, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('->>(jsonb,text)'); RETURN 'evil'; END $$;
CREATE OPERATOR regress_evil_x.->> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = regress_evil_x.jsonb_field);
CREATE FUNCTION regress_evil_x.now() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('now()'); RETURN '2000-01-01 00:00:00+00'; END $$;
CREATE FUNCTION regress_evil_x.to_timestamp(double precision) RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('to_timestamp()'); RETURN '2000-01-01 00:00:00+00'; END $$;
CREATE FUNCTION regress_evil_x.make_interval(integer, integer, integer, integer, integer, integer, double precision)
    RETURNS interval LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('make_interval()'); RETURN '0'; END $$;
CREATE FUNCTION regress_evil_x.count_step(bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('count(*)'); RETURN 1000; END $$;
CREATE AGGREGATE regress_evil_x.count(*) (SFUNC = regress_evil_x.count_step, STYPE = bigint, INITCOND = 0);
CREATE FUNCTION regress_evil_x.and_step(boolean, boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM regress_evil_x.capture('bool_and()'); RETURN true; END $$;
CREATE AGGREGATE regress_evil_x.bool_and(boolean) (SFUNC = regress_evil_x.and_step, STYPE = boolean);

SET search_path = regress_evil_x, pg_catalog, public;

-- FIFO group reads, without and with the group index.
SELECT pgmq.create('evil_fifo');
SELECT min(s) AS first FROM pgmq.send_batch('evil_fifo',
       ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::pg_catalog.jsonb[],
       ARRAY['{"x-pgmq-group": "a"}', '{"x-pgmq-group": "a"}', '{"x-pgmq-group": "b"}', NULL]::pg_catalog.jsonb[]) AS s \gset
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped('evil_fifo', 0, 10);
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped_rr('evil_fifo', 0, 10);
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped_head('evil_fifo', 0, 10);
SELECT pgmq.create_fifo_index('evil_fifo');
SELECT pgmq.create_fifo_indexes_all();
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped('evil_fifo', 0, 10);
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped_rr('evil_fifo', 30, 10);
SELECT msg_id OPERATOR(pg_catalog.-) :first AS id FROM pgmq.read_grouped_head_with_poll('evil_fifo', 30, 10, 0, 10);

-- Insert notifications: enable, a throttled insert, update, list, disable.
SELECT pgmq.enable_notify_insert('evil_fifo', 1000);
SELECT pgmq.send('evil_fifo', '{"n": 5}') OPERATOR(pg_catalog.-) :first AS id;
SELECT pgmq.send('evil_fifo', '{"n": 6}') OPERATOR(pg_catalog.-) :first AS id;
SELECT pgmq.update_notify_insert('evil_fifo', 0);
SELECT pgmq.send('evil_fifo', '{"n": 7}') OPERATOR(pg_catalog.-) :first AS id;
SELECT queue_name, throttle_interval_ms, last_notified_at OPERATOR(pg_catalog.>) 'epoch' AS notified
  FROM pgmq.list_notify_insert_throttles();
SELECT pgmq.disable_notify_insert('evil_fifo');

-- Topics.
SELECT pgmq.bind_topic('evil.*', 'evil_fifo');
SELECT pattern, queue_name, compiled_regex FROM pgmq.list_topic_bindings();
SELECT pattern FROM pgmq.list_topic_bindings('evil_fifo');
SELECT pattern, queue_name FROM pgmq.test_routing('evil.key');
SELECT pattern FROM pgmq.test_routing('other.key');
SELECT pgmq.send_topic('evil.key', '{"t": 1}');
SELECT pgmq.send_topic('other.key', '{"t": 2}');
SELECT queue_name, msg_id OPERATOR(pg_catalog.-) :first AS id
  FROM pgmq.send_batch_topic('evil.key', ARRAY['{"t": 3}']::pg_catalog.jsonb[]);
SELECT pgmq.validate_routing_key('evil.key'), pgmq.validate_topic_pattern('evil.#');
SELECT pgmq.unbind_topic('evil.*', 'evil_fifo');

-- Helpers.
SELECT pgmq._extension_exists('pgmq'), pgmq._belongs_to_pgmq('meta'), pgmq._get_partition_col('10');
SELECT pgmq.drop_queue('evil_fifo');
RESET search_path;

SELECT count(*) AS captured FROM regress_evil_x.captured;
SELECT what, count(*) FROM regress_evil_x.captured GROUP BY 1 ORDER BY 1;
SET client_min_messages = warning;
DROP SCHEMA regress_evil_x CASCADE;
RESET client_min_messages;
