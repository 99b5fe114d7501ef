-- upstream_surface: every public function of upstream pgmq 1.13.1 exists,
-- with the same identity arguments and result type (API.md §1.3), so that
-- client SQL resolves the same overloads. The list is upstream's, as
-- pg_get_function_identity_arguments prints it; functions added here that
-- upstream lacks are not listed (docs/compatibility.md names them).
CREATE TEMP TABLE upstream_functions (signature text PRIMARY KEY);
INSERT INTO upstream_functions VALUES
    ('_belongs_to_pgmq(table_name text) -> boolean'),
    ('_create_fifo_index_if_not_exists(queue_name text) -> void'),
    ('_ensure_pg_partman_installed() -> void'),
    ('_extension_exists(extension_name text) -> boolean'),
    ('_get_partition_col(partition_interval text) -> text'),
    ('_get_pg_partman_major_version() -> integer'),
    ('_get_pg_partman_schema() -> text'),
    ('_send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) -> SETOF bigint'),
    ('_validate_batch_params(msgs jsonb[], headers jsonb[]) -> void'),
    ('acquire_queue_lock(queue_name text) -> void'),
    ('archive(queue_name text, msg_id bigint) -> boolean'),
    ('archive(queue_name text, msg_ids bigint[]) -> SETOF bigint'),
    ('bind_topic(pattern text, queue_name text) -> void'),
    ('convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) -> void'),
    ('create(queue_name text) -> void'),
    ('create_fifo_index(queue_name text) -> void'),
    ('create_fifo_indexes_all() -> void'),
    ('create_non_partitioned(queue_name text) -> void'),
    ('create_partitioned(queue_name text, partition_interval text, retention_interval text, premake integer) -> void'),
    ('create_unlogged(queue_name text) -> void'),
    ('delete(queue_name text, msg_id bigint) -> boolean'),
    ('delete(queue_name text, msg_ids bigint[]) -> SETOF bigint'),
    ('detach_archive(queue_name text) -> void'),
    ('disable_notify_insert(queue_name text) -> void'),
    ('drop_queue(queue_name text) -> boolean'),
    ('drop_queue(queue_name text, partitioned boolean) -> boolean'),
    ('enable_notify_insert(queue_name text, throttle_interval_ms integer) -> void'),
    ('format_table_name(queue_name text, prefix text) -> text'),
    ('list_notify_insert_throttles() -> TABLE(queue_name text, throttle_interval_ms integer, last_notified_at timestamp with time zone)'),
    ('list_queues() -> SETOF pgmq.queue_record'),
    ('list_topic_bindings() -> TABLE(pattern text, queue_name text, bound_at timestamp with time zone, compiled_regex text)'),
    ('list_topic_bindings(queue_name text) -> TABLE(pattern text, queue_name text, bound_at timestamp with time zone, compiled_regex text)'),
    ('metrics(queue_name text) -> pgmq.metrics_result'),
    ('metrics_all() -> SETOF pgmq.metrics_result'),
    ('notify_queue_listeners() -> trigger'),
    ('pop(queue_name text, qty integer) -> SETOF pgmq.message_record'),
    ('purge_queue(queue_name text) -> bigint'),
    ('read(queue_name text, vt integer, qty integer, conditional jsonb) -> SETOF pgmq.message_record'),
    ('read_grouped(queue_name text, vt integer, qty integer) -> SETOF pgmq.message_record'),
    ('read_grouped_head(queue_name text, vt integer, qty integer) -> SETOF pgmq.message_record'),
    ('read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) -> SETOF pgmq.message_record'),
    ('read_grouped_rr(queue_name text, vt integer, qty integer) -> SETOF pgmq.message_record'),
    ('read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) -> SETOF pgmq.message_record'),
    ('read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) -> SETOF pgmq.message_record'),
    ('read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) -> SETOF pgmq.message_record'),
    ('send(queue_name text, msg jsonb) -> SETOF bigint'),
    ('send(queue_name text, msg jsonb, delay integer) -> SETOF bigint'),
    ('send(queue_name text, msg jsonb, delay timestamp with time zone) -> SETOF bigint'),
    ('send(queue_name text, msg jsonb, headers jsonb) -> SETOF bigint'),
    ('send(queue_name text, msg jsonb, headers jsonb, delay integer) -> SETOF bigint'),
    ('send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[]) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[], delay integer) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[], headers jsonb[]) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) -> SETOF bigint'),
    ('send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) -> SETOF bigint'),
    ('send_batch_topic(routing_key text, msgs jsonb[]) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_batch_topic(routing_key text, msgs jsonb[], delay integer) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) -> TABLE(queue_name text, msg_id bigint)'),
    ('send_topic(routing_key text, msg jsonb) -> integer'),
    ('send_topic(routing_key text, msg jsonb, delay integer) -> integer'),
    ('send_topic(routing_key text, msg jsonb, headers jsonb, delay integer) -> integer'),
    ('set_vt(queue_name text, msg_id bigint, vt integer) -> SETOF pgmq.message_record'),
    ('set_vt(queue_name text, msg_id bigint, vt timestamp with time zone) -> SETOF pgmq.message_record'),
    ('set_vt(queue_name text, msg_ids bigint[], vt integer) -> SETOF pgmq.message_record'),
    ('set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone) -> SETOF pgmq.message_record'),
    ('test_routing(routing_key text) -> TABLE(pattern text, queue_name text, compiled_regex text)'),
    ('unbind_topic(pattern text, queue_name text) -> boolean'),
    ('update_notify_insert(queue_name text, throttle_interval_ms integer) -> void'),
    ('validate_queue_name(queue_name text) -> void'),
    ('validate_routing_key(routing_key text) -> boolean'),
    ('validate_topic_pattern(pattern text) -> boolean');
CREATE TEMP VIEW our_functions AS
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') -> ' || pg_get_function_result(p.oid) AS signature
  FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace;
SELECT count(*) AS upstream_functions FROM upstream_functions;
-- Missing here, or with another signature: none.
SELECT signature AS missing FROM upstream_functions EXCEPT SELECT signature FROM our_functions ORDER BY 1;
-- Upstream's result types, attribute by attribute in order: clients decode
-- them by position, and upstream adds its new columns at the end, so any
-- column of ours there would be read as upstream's next one. The types of
-- RETURNS TABLE functions are part of the signatures above.
CREATE TEMP TABLE upstream_types (type_name text, attributes text, PRIMARY KEY (type_name));
INSERT INTO upstream_types VALUES
    ('message_record', 'msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, last_read_at timestamp with time zone, vt timestamp with time zone, message jsonb, headers jsonb'),
    ('metrics_result', 'queue_name text, queue_length bigint, newest_msg_age_sec integer, oldest_msg_age_sec integer, total_messages bigint, scrape_time timestamp with time zone, queue_visible_length bigint, default_partition_length bigint'),
    ('queue_record', 'queue_name character varying, is_partitioned boolean, is_unlogged boolean, created_at timestamp with time zone');
-- Types whose attributes differ from upstream's: none.
SELECT u.type_name, u.attributes AS upstream, o.attributes AS ours
  FROM upstream_types AS u
  LEFT JOIN (SELECT t.typname::text AS type_name,
                    string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum) AS attributes
               FROM pg_type AS t JOIN pg_attribute AS a ON a.attrelid = t.typrelid
              WHERE t.typnamespace = 'pgmq'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
              GROUP BY t.typname) AS o USING (type_name)
 WHERE o.attributes IS DISTINCT FROM u.attributes
 ORDER BY 1;
-- What list_queues, metrics and metrics_all return: those types' columns.
SELECT p.proname, pg_get_function_result(p.oid) AS returns
  FROM pg_proc AS p
 WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname IN ('list_queues', 'metrics', 'metrics_all')
 ORDER BY 1;
