#!/usr/bin/env bash
# test/integration/extension_update.sh: ALTER EXTENSION pgmq UPDATE from this
# extension's earlier version to the current one keeps every queue, message
# and policy, and leaves the same catalog as a fresh CREATE EXTENSION:
#  - a database at 1.13.1+cpp (its install script ships for this) with
#    plain, paused and partitioned queues, messages, a dead-letter policy
#    and a leased message;
#  - after the update: the messages and policies are there, list_queues,
#    metrics and metrics_all answer with upstream's columns, queue_state
#    shows the pause, the new functions work;
#  - every function's signature and result, the composite types' attributes,
#    the event triggers, the privileges on the extension's tables (and their
#    columns) and their row policies equal those of a fresh install.
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
set -euo pipefail

OLD=pgmq_it_update_old
NEW=pgmq_it_update_new
FROM_VERSION=1.13.1+cpp

drop_databases() {
  local db
  for db in "$OLD" "$NEW"; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
}
trap drop_databases EXIT

TEST_TAG=extension_update
. "$(dirname "$0")/../lib/sql_checks.sh"

drop_databases
for db in "$OLD" "$NEW"; do
  q postgres "CREATE DATABASE $db" >/dev/null
  q "$db" "SET client_min_messages = warning; CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman" >/dev/null
done
q "$NEW" "CREATE EXTENSION pgmq" >/dev/null
target=$(q "$NEW" "SELECT extversion FROM pg_extension WHERE extname = 'pgmq'")
[ "$target" != "$FROM_VERSION" ] || fail "the current version is still $FROM_VERSION: nothing to update"

# --- a database at the earlier version, in use ------------------------------
q "$OLD" "CREATE EXTENSION pgmq VERSION '$FROM_VERSION'" >/dev/null
q "$OLD" "SET client_min_messages = error;
  SELECT pgmq.create('orders'); SELECT pgmq.create('orders_dead'); SELECT pgmq.create('held');
  SELECT pgmq.create_partitioned('events', '100', '1000');
  SELECT pgmq.set_dead_letter_queue('orders', 'orders_dead', 2);
  SELECT pgmq.send('orders', jsonb_build_object('n', i)) FROM generate_series(1, 5) AS i;
  SELECT pgmq.send('held', '{\"held\": true}');
  SELECT pgmq.pause('held');
  SELECT pgmq.send('events', jsonb_build_object('e', i)) FROM generate_series(1, 3) AS i;
  SELECT count(*) FROM pgmq.read('orders', 600, 1);" >/dev/null
check "$OLD" "the earlier version lists the pause in list_queues, as it did" \
  "SELECT paused FROM pgmq.list_queues() WHERE queue_name = 'held'"

# --- the update --------------------------------------------------------------
q "$OLD" "ALTER EXTENSION pgmq UPDATE" >/dev/null
check "$OLD" "the update reaches $target" "SELECT extversion = '$target' FROM pg_extension WHERE extname = 'pgmq'"
check "$OLD" "every message is still there" \
  "SELECT (SELECT count(*) FROM pgmq.q_orders) = 5 AND (SELECT count(*) FROM pgmq.q_held) = 1
      AND (SELECT count(*) FROM pgmq.q_events) = 3"
check "$OLD" "the leased message keeps its lease" \
  "SELECT count(*) = 1 FROM pgmq.q_orders WHERE read_ct = 1 AND vt > now()"
check "$OLD" "metrics and metrics_all answer with upstream's columns" \
  "SELECT (SELECT queue_length FROM pgmq.metrics('orders')) = 5 AND (SELECT count(*) FROM pgmq.metrics_all()) = 4"
check "$OLD" "list_queues has upstream's columns" \
  "SELECT string_agg(attname, ',' ORDER BY attnum) = 'queue_name,is_partitioned,is_unlogged,created_at'
     FROM pg_attribute WHERE attrelid = 'pgmq.queue_record'::regclass AND attnum > 0 AND NOT attisdropped"
check "$OLD" "the pause and the dead-letter policy are kept (queue_state)" \
  "SELECT (SELECT paused FROM pgmq.queue_state('held'))
      AND (SELECT dead_letter_queue = 'orders_dead' FROM pgmq.queue_state('orders'))"
check "$OLD" "the new functions work on the old queues" \
  "SELECT pgmq.dead_letter('orders', (SELECT min(msg_id) FROM pgmq.q_orders), 'after the update')
      AND (SELECT count(*) = 1 FROM pgmq.redrive_all('orders_dead'))"
q "$OLD" "SET client_min_messages = warning; SELECT pgmq.create_stream('feed');
  SELECT pgmq.subscribe('feed', 'audit', '-infinity'); SELECT pgmq.send('feed', '{\"f\": 1}')" >/dev/null
check "$OLD" "a stream made after the update is read by its group" \
  "SELECT count(*) = 1 FROM pgmq.read_stream('feed', 'audit', 30, 10)"
check "$OLD" "a partitioned queue still takes messages into its partitions" \
  "SELECT (SELECT pgmq.send('events', '{}')) > 0 AND NOT EXISTS (SELECT FROM pgmq.q_events_default)"

# --- the same catalog as a fresh install -------------------------------------
catalog="SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') -> ' ||
                pg_get_function_result(p.oid) || ' ' || p.prokind::text || p.provolatile::text || p.prosecdef::text ||
                coalesce(' ' || pg_get_function_arguments(p.oid), '')
           FROM pg_proc AS p WHERE p.pronamespace = 'pgmq'::regnamespace
         UNION ALL
         SELECT 'type ' || t.typname || ': ' || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                ORDER BY a.attnum)
           FROM pg_type AS t JOIN pg_attribute AS a ON a.attrelid = t.typrelid
          WHERE t.typnamespace = 'pgmq'::regnamespace AND t.typtype = 'c' AND a.attnum > 0 AND NOT a.attisdropped
            AND NOT EXISTS (SELECT FROM pg_class AS c WHERE c.oid = t.typrelid AND c.relkind <> 'c')
          GROUP BY t.typname
         UNION ALL
         SELECT 'event trigger ' || evtname || ' on ' || evtevent || ' tags ' || coalesce(evttags::text, 'any') ||
                ' runs ' || evtfoid::regproc::text
           FROM pg_event_trigger WHERE evtname LIKE 'pgmq%'
         UNION ALL
         SELECT 'privileges ' || c.relname || ' ' || coalesce(c.relacl::text, 'default')
           FROM pg_class AS c JOIN pg_depend AS d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
          WHERE c.relnamespace = 'pgmq'::regnamespace
         UNION ALL
         SELECT 'privileges ' || c.relname || '.' || a.attname || ' ' || a.attacl::text
           FROM pg_class AS c JOIN pg_depend AS d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
           JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND a.attacl IS NOT NULL
          WHERE c.relnamespace = 'pgmq'::regnamespace
         UNION ALL
         SELECT 'row policy ' || tablename || '.' || policyname || ' ' || cmd || ' ' || array_to_string(roles, ',') ||
                ' using ' || coalesce(qual, '-') || ' check ' || coalesce(with_check, '-')
           FROM pg_policies WHERE schemaname = 'pgmq'
         ORDER BY 1"
q "$OLD" "$catalog" >"${TMPDIR:-/tmp}/$OLD.catalog"
q "$NEW" "$catalog" >"${TMPDIR:-/tmp}/$NEW.catalog"
if ! diff -u "${TMPDIR:-/tmp}/$NEW.catalog" "${TMPDIR:-/tmp}/$OLD.catalog"; then
  fail "the updated catalog differs from a fresh install's (- fresh, + updated)"
fi
say "ok: the updated catalog equals a fresh install's ($(wc -l <"${TMPDIR:-/tmp}/$NEW.catalog") functions, types, triggers, privileges and row policies)"
rm -f "${TMPDIR:-/tmp}/$OLD.catalog" "${TMPDIR:-/tmp}/$NEW.catalog"
say "passed"
