#!/usr/bin/env bash
# test/integration/dump_restore.sh: a database using every kind of pgmq
# state survives pg_dump -> pg_restore into a fresh database (API.md §2.12):
#  - queues: plain, unlogged, mixed-case, and partitioned (pg_partman, when
#    create_partitioned exists), with messages (read, delayed, with headers),
#    archives, a FIFO group index, insert-notify triggers;
#  - the extension's configuration tables: meta, notify_insert_throttle,
#    topic_bindings, policies, deduplication, streams, consumer_groups (their
#    rows are dumped as extension configuration;
#    queue tables are ordinary tables, not extension members);
#  - afterwards every row is identical (same msg_ids, same timestamps), every
#    sequence continues after the highest id ever allocated, and sends,
#    notifications, topic routing and group reads work in the copy.
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
set -euo pipefail

SRC=pgmq_it_dump_src
DST=pgmq_it_dump_dst
work=$(mktemp -d /tmp/pgmq-dump-restore.XXXXXX)

drop_databases() {
  local db
  for db in "$SRC" "$DST"; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
}
trap 'drop_databases; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

TEST_TAG=dump_restore
. "$(dirname "$0")/../lib/sql_checks.sh"

drop_databases
for db in "$SRC" "$DST"; do
  q postgres "CREATE DATABASE $db" >/dev/null
done

# --- the source database -----------------------------------------------------
q "$SRC" "CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman; CREATE EXTENSION pgmq" >/dev/null
partitioned=$(q "$SRC" "SELECT to_regprocedure('pgmq.create_partitioned(text, text, text, integer)') IS NOT NULL")

q "$SRC" "
SELECT pgmq.create('dr_plain');
SELECT pgmq.create_unlogged('dr_unlogged');
SELECT pgmq.create('DR_Mixed');
-- plain: headers, reads (read_ct, last_read_at, a future vt), a delay, an
-- archive, a delete, and the highest id deleted (the sequence is ahead of
-- every stored id).
SELECT pgmq.send_batch('dr_plain',
       ARRAY['{\"n\": 1}', '{\"n\": 2}', '{\"n\": 3}', '{\"n\": 4}', '{\"n\": 5}']::jsonb[],
       ARRAY['{\"x-pgmq-group\": \"a\"}', '{\"x-pgmq-group\": \"b\"}', NULL, '{\"trace\": \"t\"}', '{}']::jsonb[]);
SELECT pgmq.read('dr_plain', 600, 2);
SELECT pgmq.send('dr_plain', '{\"n\": 6, \"text\": \"unicode: \u00e9\u00e8 \\\"quoted\\\"\"}', 3600);
SELECT pgmq.archive('dr_plain', 3::bigint);
SELECT pgmq.delete('dr_plain', 4::bigint);
SELECT pgmq.send('dr_plain', '{\"n\": 7}');
SELECT pgmq.delete('dr_plain', 7::bigint);
SELECT pgmq.send_batch('dr_unlogged', ARRAY['{\"u\": 1}', '{\"u\": 2}', '{\"u\": 3}']::jsonb[]);
SELECT pgmq.send('DR_Mixed', '{\"m\": 1}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.send('DR_Mixed', '{\"m\": 2}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.create_fifo_index('DR_Mixed');
SELECT pgmq.enable_notify_insert('dr_plain', 0);
SELECT pgmq.enable_notify_insert('DR_Mixed', 100);
SELECT pgmq.send('DR_Mixed', '{\"m\": 3}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.bind_topic('orders.*', 'dr_plain');
SELECT pgmq.bind_topic('#', 'DR_Mixed');
SELECT pgmq.archive('DR_Mixed', ARRAY[1::bigint]);
SELECT pgmq.set_dead_letter_queue('dr_plain', 'dr_unlogged', 3);
SELECT pgmq.set_retry_backoff('dr_plain', 2, 60);
SELECT pgmq.set_deduplication('DR_Mixed', '1 day');
SELECT pgmq.set_retention('dr_unlogged', '30 days', '90 days');
SELECT pgmq.send('DR_Mixed', '{\"m\": 4}', '{\"x-pgmq-deduplication-id\": \"once\"}'::jsonb);
" >/dev/null 2>&1 || fail "populating $SRC"
queues="dr_plain dr_unlogged DR_Mixed"
if [ "$partitioned" = t ]; then
  q "$SRC" "
SELECT pgmq.create_partitioned('dr_part', '10', '100000');
SELECT pgmq.send_batch('dr_part', (SELECT array_agg(jsonb_build_object('p', i) ORDER BY i) FROM generate_series(1, 25) AS i));
SELECT pgmq.archive('dr_part', ARRAY[1::bigint, 2, 15]);
SELECT pgmq.read('dr_part', 600, 1);
SELECT pgmq.bind_topic('orders.#', 'dr_part');
" >/dev/null 2>&1 || fail "populating the partitioned queue"
  queues="$queues dr_part"
else
  say "create_partitioned does not exist: no partitioned queue"
fi

# snapshot DB: everything that must survive, as text. Timestamps at full
# precision, UTC.
snapshot() {
  local db=$1 name table
  {
    q "$db" "SET TIME ZONE 'UTC';
      SELECT 'meta', queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta ORDER BY queue_name"
    q "$db" "SET TIME ZONE 'UTC';
      SELECT 'throttle', * FROM pgmq.list_notify_insert_throttles()"
    q "$db" "SET TIME ZONE 'UTC';
      SELECT 'binding', pattern, queue_name, bound_at, compiled_regex FROM pgmq.topic_bindings ORDER BY 2, 3"
    q "$db" "SET TIME ZONE 'UTC';
      SELECT 'policy', queue_name, dead_letter_queue, max_deliveries, retry_base_seconds, retry_max_seconds,
             deduplication_window, retention_max_age, retention_archive_max_age, updated_at FROM pgmq.policies ORDER BY 2"
    q "$db" "SET TIME ZONE 'UTC';
      SELECT 'deduplication', * FROM pgmq.deduplication ORDER BY 2, 3"
    q "$db" "SELECT 'table', c.relname, c.relkind, c.relpersistence FROM pg_class c
      WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 2"
    q "$db" "SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'pgmq' ORDER BY 2"
    q "$db" "SELECT 'trigger', tgrelid::regclass, pg_get_triggerdef(oid) FROM pg_trigger
      WHERE NOT tgisinternal AND tgrelid::regclass::text LIKE 'pgmq.%' ORDER BY tgrelid::regclass::text"
    q "$db" "SELECT 'part_config', parent_table, control, partition_interval, premake, retention
      FROM partman.part_config WHERE parent_table LIKE 'pgmq.%' ORDER BY 2"
    for name in $queues; do
      table=$(q "$db" "SELECT lower('$name')")
      q "$db" "SELECT 'sequence $name', pg_sequence_last_value('pgmq.q_${table}_msg_id_seq')"
      q "$db" "SET TIME ZONE 'UTC';
        SELECT 'q $name', msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM pgmq.q_${table} ORDER BY msg_id"
      q "$db" "SET TIME ZONE 'UTC';
        SELECT 'a $name', msg_id, read_ct, enqueued_at, last_read_at, archived_at, vt, message, headers
        FROM pgmq.a_${table} ORDER BY msg_id"
    done
  } 2>&1
}

snapshot "$SRC" >"$work/before.txt"
grep -q '^q dr_plain|6|' "$work/before.txt" || fail "the snapshot is missing queue rows"
say "source: $(wc -l <"$work/before.txt") lines of state, queues: $queues"

# --- dump and restore ----------------------------------------------------------
pg_dump -Fc -d "$SRC" -f "$work/dump" || fail "pg_dump"
pg_restore --exit-on-error -d "$DST" "$work/dump" 2>"$work/restore.log" || {
  cat "$work/restore.log"
  fail "pg_restore"
}
say "ok: pg_dump -Fc and pg_restore --exit-on-error"

snapshot "$DST" >"$work/after.txt"
if ! diff -u "$work/before.txt" "$work/after.txt"; then
  fail "the restored database differs (above)"
fi
say "ok: meta, throttles, bindings, tables, indexes, triggers, partman config, sequences and every message are identical"

# --- the copy works ----------------------------------------------------------------
check "$DST" "queue tables are not extension members; the configuration tables are" "
  SELECT array_agg(c.relname ORDER BY c.relname) = ARRAY['consumer_groups', 'deduplication', 'meta', 'notify_insert_throttle', 'policies', 'streams', 'topic_bindings']::name[]
    FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
   WHERE d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmq')"
for name in $queues; do
  table=$(q "$DST" "SELECT lower('$name')")
  check "$DST" "a send to $name continues after the highest id ever allocated" "
    WITH sent AS (SELECT pgmq.send('$name', '{\"after\": \"restore\"}') AS id)
    SELECT id = $(q "$SRC" "SELECT pg_sequence_last_value('pgmq.q_${table}_msg_id_seq')") + 1 FROM sent"
done
check "$DST" "a deduplication id sent before the dump still deduplicates" "
  SELECT pgmq.send('DR_Mixed', '{\"m\": 5}', '{\"x-pgmq-deduplication-id\": \"once\"}'::jsonb)
         = (SELECT msg_id FROM pgmq.deduplication WHERE deduplication_id = 'once')"
q "$DST" "SELECT pgmq.send('dr_plain', '{\"dl\": 1}');
  UPDATE pgmq.q_dr_plain SET read_ct = 3, vt = now() - interval '1 s' WHERE message = '{\"dl\": 1}'" >/dev/null
check "$DST" "the restored dead-letter policy: a read at the limit moves the message" "
  SELECT count(*) = 0 FROM pgmq.read('dr_plain', 30, 100) WHERE message = '{\"dl\": 1}'"
check "$DST" "... to its dead-letter queue" "
  SELECT count(*) = 1 FROM pgmq.q_dr_unlogged WHERE message = '{\"dl\": 1}'"
check "$DST" "the restored insert trigger still stamps the throttle row" "
  SELECT last_notified_at > '$(q "$SRC" "SELECT last_notified_at FROM pgmq.notify_insert_throttle WHERE queue_name = 'dr_plain'")'
    FROM pgmq.notify_insert_throttle WHERE queue_name = 'dr_plain'"
check "$DST" "topic routing uses the restored bindings" "
  SELECT pgmq.send_topic('orders.new', '{\"o\": 1}') = $([ "$partitioned" = t ] && echo 3 || echo 2)"
check "$DST" "a group read follows the restored messages (DR_Mixed: 1 archived, 2 and 3 open)" "
  SELECT array_agg(message->>'m' ORDER BY msg_id) = ARRAY['2', '3'] FROM pgmq.read_grouped('DR_Mixed', 30, 2)"
check "$DST" "read, archive and metrics work on every restored queue" "
  SELECT bool_and((SELECT count(*) FROM pgmq.read(q.queue_name, 30, 100)) > 0
                  AND (SELECT queue_length FROM pgmq.metrics(q.queue_name)) > 0)
    FROM pgmq.meta AS q"
if [ "$partitioned" = t ]; then
  check "$DST" "sends to the restored partitioned queue land in a real partition" "
    SELECT tableoid::regclass::text NOT LIKE '%_default' FROM pgmq.q_dr_part ORDER BY msg_id DESC LIMIT 1"
fi
say "passed"
