#!/usr/bin/env bash
# test/integration/upgrade_dump_restore.sh: a PostgreSQL 15 database with
# queues in every state, moved to PostgreSQL 18 by pg_dump and pg_restore
# (issue 28), with the commands of docs/operations.md:
#  - the source, on the server of PGHOST (test/run's PostgreSQL 15, pg_partman
#    4.7.2): plain, unlogged and mixed-case queues; a queue partitioned by
#    msg_id and one by time, with archives; messages read (read_ct, a future
#    vt), delayed, archived, dead-lettered, with headers; dead-letter, retry,
#    deduplication and retention policies; a FIFO group index; topic
#    bindings; insert-notification throttles;
#  - pg_dump -Fc, and pg_partman's configuration exported as CSV mapped to
#    pg_partman 5's columns (pg_partman 4's rows do not load into 5's tables);
#  - the target: PostgreSQL 18 with pg_partman 5.5 and this tree's pgmq, in
#    the Debian root filesystem of test/lib/rootfs.sh (made here when missing,
#    the same one test/run uses for its PostgreSQL 18 suites later), where
#    pg_restore leaves out pg_partman's old configuration rows and the CSV
#    loads them;
#  - afterwards every message (msg_id, read_ct, enqueued_at, vt, message,
#    headers), every archive, sequence, policy, binding, throttle, index,
#    trigger, partition and pg_partman row is as it was; sends continue each
#    sequence, the restored policies, deduplication, routing and group reads
#    work, and pgmq's maintenance premakes partitions with pg_partman 5.
#
# Host only (test/run's HOST_ONLY_TESTS): it needs the root filesystem of the
# newer major. Building pgmq in it takes about a minute; a new root about two
# more (debootstrap and packages), which test/run would otherwise spend later.
# PGMQ_UPGRADE_TO picks the target major (17 or 18, default 18);
# PGMQ_ROOTFS_CACHE where the root filesystems live (test/lib/rootfs.sh).
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
set -euo pipefail

TEST_TAG=upgrade_dump_restore
. "$(dirname "$0")/../lib/sql_checks.sh"

QUEUES="up_plain up_unlogged Up_Mixed up_dead up_part up_time"
# pg_partman 5's part_config columns that pg_partman 4 also has; 'native'
# became 'range' (pg_partman's own update script, pg_partman--4.8.0--5.0.0.sql,
# makes the same mapping).
PART_CONFIG_COLUMNS="parent_table, control, partition_interval, partition_type, premake, automatic_maintenance,
  template_table, retention, retention_schema, retention_keep_index, retention_keep_table, epoch, constraint_cols,
  optimize_constraint, infinite_time_partitions, datetime_string, jobmon, sub_partition_set_full, undo_in_progress,
  inherit_privileges, constraint_valid, ignore_default_data"

# snapshot DB: everything that must survive, as text, timestamps in UTC at
# full precision; the same query text on both majors.
snapshot() {
  local db=$1 name table
  q "$db" "SET TIME ZONE 'UTC';
    SELECT 'meta', queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta ORDER BY queue_name"
  q "$db" "SET TIME ZONE 'UTC'; SELECT 'throttle', * FROM pgmq.list_notify_insert_throttles() ORDER BY 2"
  q "$db" "SET TIME ZONE 'UTC';
    SELECT 'binding', pattern, queue_name, bound_at, compiled_regex FROM pgmq.topic_bindings ORDER BY 2, 3"
  q "$db" "SET TIME ZONE 'UTC'; SELECT 'policy', * FROM pgmq.list_policies() ORDER BY 2"
  q "$db" "SET TIME ZONE 'UTC'; SELECT 'policy row', * FROM pgmq.policies ORDER BY 2"
  q "$db" "SET TIME ZONE 'UTC'; SELECT 'deduplication', * FROM pgmq.deduplication ORDER BY 2, 3"
  q "$db" "SELECT 'table', c.relname, c.relkind, c.relpersistence, pg_get_expr(c.relpartbound, c.oid)
    FROM pg_class c WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 2"
  q "$db" "SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'pgmq' ORDER BY 2"
  q "$db" "SELECT 'trigger', tgrelid::regclass, pg_get_triggerdef(oid) FROM pg_trigger
    WHERE NOT tgisinternal AND tgrelid::regclass::text LIKE 'pgmq.%' ORDER BY tgrelid::regclass::text, 3"
  q "$db" "SELECT 'part_config', $PART_CONFIG_COLUMNS FROM partman.part_config ORDER BY parent_table" |
    sed '/^part_config|/s/|native|/|range|/'
  for name in $QUEUES; do
    table=$(q "$db" "SELECT lower('$name')")
    q "$db" "SELECT 'sequence $name', pg_sequence_last_value('pgmq.q_${table}_msg_id_seq')"
    q "$db" "SET TIME ZONE 'UTC'; SELECT 'q $name', msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
      FROM pgmq.q_${table} ORDER BY msg_id"
    q "$db" "SET TIME ZONE 'UTC'; SELECT 'a $name', msg_id, read_ct, enqueued_at, last_read_at, archived_at, vt,
      message, headers FROM pgmq.a_${table} ORDER BY msg_id"
  done
}

# --- inside the newer major's root filesystem: restore and check ---------------------
if [ "${1:-}" = --in-root ]; then
  work=$2
  cd "$(dirname "$0")/../.."
  . scripts/lib/cluster.sh
  ensure_packages >"$work/packages.log" 2>&1 || { tail -n 20 "$work/packages.log"; fail "packages for PostgreSQL $PG_MAJOR"; }
  build_and_install >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; fail "building pgmq for PostgreSQL $PG_MAJOR"; }
  trap 'stop_cluster' EXIT
  start_cluster "$work/cluster" 5639
  say "PostgreSQL $(q postgres "SHOW server_version"), pg_partman $(q postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_partman'")"
  cd "$work"
  # Why the restore below leaves pg_partman's rows out: a plain restore of a
  # dump made with pg_partman 4 stops at them.
  createdb plain_restore
  if pg_restore --exit-on-error -d plain_restore app.dump 2>plain_restore.log; then
    fail "a plain pg_restore of pg_partman 4's configuration succeeded: docs/operations.md needs updating"
  fi
  say "ok: a plain pg_restore stops at pg_partman 4's configuration: $(grep -m1 -o 'ERROR: .*' plain_restore.log)"
  dropdb plain_restore
  # docs/operations.md, "Upgrade PostgreSQL by dump and restore":
  createdb app
  pg_restore -l app.dump | grep -v -E 'TABLE DATA partman (part_config|part_config_sub|custom_time_partitions) ' >app.list
  pg_restore -L app.list --exit-on-error -d app app.dump 2>restore.log || { cat restore.log; fail "pg_restore"; }
  psql -X -q -v ON_ERROR_STOP=1 -d app -c "\copy partman.part_config ($PART_CONFIG_COLUMNS) FROM 'part_config.csv' WITH (FORMAT csv, HEADER)" ||
    fail "loading pg_partman's configuration"
  say "ok: pg_restore --exit-on-error without pg_partman 4's configuration rows, which the CSV loaded"

  snapshot app >after.txt
  diff -u before.txt after.txt || fail "the restored database differs (above)"
  say "ok: $(wc -l <after.txt) lines identical: every message (ids, vt, read_ct), archive, sequence, policy,"
  say "    binding, throttle, index, trigger, partition and pg_partman configuration row"

  for name in $QUEUES; do
    last=$(grep "^sequence $name|" before.txt | cut -d'|' -f2)
    check app "a send to $name continues its sequence after $last" "
      SELECT pgmq.send('$name', '{\"after\": \"upgrade\"}') = $last + 1"
  done
  visible=$(q app "SELECT count(*) FROM pgmq.q_up_plain WHERE vt <= now()")
  check app "read returns the $visible visible messages of up_plain; those read or delayed before the dump stay hidden" "
    SELECT (SELECT count(*) FROM pgmq.q_up_plain WHERE vt > now()) = 3
       AND (SELECT count(*) FROM pgmq.read('up_plain', 30, 100)) = $visible"
  check app "a deduplication id sent before the dump still deduplicates" "
    SELECT pgmq.send('Up_Mixed', '{\"m\": 9}', '{\"x-pgmq-deduplication-id\": \"once\"}'::jsonb)
           = (SELECT msg_id FROM pgmq.deduplication WHERE deduplication_id = 'once')"
  q app "SELECT pgmq.send('up_dead', '{\"dl\": \"after\"}')" >/dev/null
  deliveries=
  for _ in 1 2 3; do
    deliveries+=$(q app "SELECT count(*) FROM pgmq.read('up_dead', 0, 100) WHERE message = '{\"dl\": \"after\"}'")
  done
  check app "the restored dead-letter policy (max_deliveries 2): delivered twice ($deliveries), then moved" "
    SELECT '$deliveries' = '110'
       AND (SELECT count(*) FROM pgmq.q_up_unlogged WHERE message = '{\"dl\": \"after\"}') = 1"
  check app "topic routing uses the restored bindings" "SELECT pgmq.send_topic('orders.new', '{\"o\": 2}') = 2"
  check app "a group read follows the restored FIFO order (Up_Mixed: 1 archived, 2 and 3 open)" "
    SELECT array_agg(message->>'m' ORDER BY msg_id) = ARRAY['2', '3'] FROM pgmq.read_grouped('Up_Mixed', 30, 2)"
  check app "metrics answer for every restored queue" "
    SELECT count(*) = $(wc -w <<<"$QUEUES") FROM pgmq.metrics_all()"
  check app "sends to the restored partitioned queues land in real partitions" "
    SELECT bool_and(tableoid::regclass::text NOT LIKE '%\_default')
      FROM (SELECT tableoid FROM pgmq.q_up_part UNION ALL SELECT tableoid FROM pgmq.q_up_time) AS t"
  IFS='|' read -r position premade < <(q app "SELECT current_position, premade_until
    FROM pgmq.partition_status('up_part') WHERE parent_table = 'pgmq.q_up_part'")
  # Into the last premade partition, 20 ids short of its end.
  q app "SELECT count(*) FROM pgmq.send_batch('up_part', array_fill('{}'::jsonb, ARRAY[$premade - $position - 20]))" >/dev/null
  q app "CALL pgmq.run_partition_maintenance()"
  check app "pgmq's maintenance premakes up_part's partitions with pg_partman 5 (premade until $premade before)" "
    SELECT bool_and(premade_until::bigint > $premade AND default_partition_rows = 0)
      FROM pgmq.partition_status('up_part')"
  check app "... and keeps up_time's (time partitions, pg_partman 4's names)" "
    SELECT bool_and(premade_until::timestamptz > now() + interval '3 days' AND default_partition_rows = 0)
      FROM pgmq.partition_status('up_time')"
  say "passed on PostgreSQL $PG_MAJOR"
  exit 0
fi

# --- on the host: the PostgreSQL 15 source, the dump, then the target ------------------
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/test/lib/rootfs.sh"
target=${PGMQ_UPGRADE_TO:-18}
SRC=pgmq_it_upgrade_src
work=$(mktemp -d /tmp/pgmq-upgrade.XXXXXX)
root=
inner=
lock=
cleanup() {
  local status=$?
  set +e
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $SRC WITH (FORCE)" >/dev/null 2>&1
  if [ -n "$inner" ]; then
    rm -rf "${root:?}/$inner" "$root/pgmq-upgrade"
  fi
  if [ -n "$lock" ]; then
    exec {lock}>&-
  fi
  rm -rf "$work"
  if [ $status -eq 0 ]; then say "PASS ($SECONDS s)"; else say "FAILED (exit $status, $SECONDS s)"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 143' INT TERM

source_major=$(q postgres "SELECT current_setting('server_version_num')::int / 10000")
[ "$source_major" -lt "$target" ] || fail "the server of PGHOST is PostgreSQL $source_major, not older than $target"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $SRC WITH (FORCE)" >/dev/null 2>&1
q postgres "CREATE DATABASE $SRC" >/dev/null
q "$SRC" "CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman; CREATE EXTENSION pgmq" >/dev/null
q "$SRC" "
SELECT pgmq.create('up_plain');
SELECT pgmq.create_unlogged('up_unlogged');
SELECT pgmq.create('Up_Mixed');
SELECT pgmq.create('up_dead');
SELECT pgmq.create_partitioned('up_part', '100', '100000', 2);
SELECT pgmq.create_partitioned('up_time', '1 day', '7 days', 4);
-- up_plain: headers, two reads (read_ct, last_read_at, a vt 10 minutes ahead),
-- a delayed message, an archive, deletes up to the highest id.
SELECT pgmq.send_batch('up_plain',
       ARRAY['{\"n\": 1}', '{\"n\": 2}', '{\"n\": 3}', '{\"n\": 4}', '{\"n\": 5}']::jsonb[],
       ARRAY['{\"x-pgmq-group\": \"a\"}', '{\"x-pgmq-group\": \"b\"}', NULL, '{\"trace\": \"t\"}', '{}']::jsonb[]);
SELECT pgmq.read('up_plain', 600, 2);
SELECT pgmq.send('up_plain', '{\"n\": 6, \"text\": \"unicode: \u00e9 \\\"quoted\\\"\"}', 3600);
SELECT pgmq.archive('up_plain', 3::bigint);
SELECT pgmq.delete('up_plain', 4::bigint);
SELECT pgmq.send('up_plain', '{\"n\": 7}');
SELECT pgmq.delete('up_plain', 7::bigint);
SELECT pgmq.set_retry_backoff('up_plain', 2, 60);
SELECT pgmq.send_batch('up_unlogged', ARRAY['{\"u\": 1}', '{\"u\": 2}']::jsonb[]);
SELECT pgmq.set_retention('up_unlogged', '30 days', '90 days');
-- Up_Mixed: a FIFO group index, a throttled insert notification, a
-- deduplication window with an id in it.
SELECT pgmq.send('Up_Mixed', '{\"m\": 1}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.send('Up_Mixed', '{\"m\": 2}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.create_fifo_index('Up_Mixed');
SELECT pgmq.enable_notify_insert('Up_Mixed', 100);
SELECT pgmq.enable_notify_insert('up_plain', 0);
SELECT pgmq.send('Up_Mixed', '{\"m\": 3}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.archive('Up_Mixed', ARRAY[1::bigint]);
SELECT pgmq.set_deduplication('Up_Mixed', '1 day');
SELECT pgmq.send('Up_Mixed', '{\"m\": 4}', '{\"x-pgmq-deduplication-id\": \"once\"}'::jsonb);
-- up_dead: dead letters to up_unlogged after 2 deliveries; one message
-- already moved, one read once.
SELECT pgmq.set_dead_letter_queue('up_dead', 'up_unlogged', 2);
SELECT pgmq.send_batch('up_dead', ARRAY['{\"d\": 1}', '{\"d\": 2}']::jsonb[]);
SELECT pgmq.read('up_dead', 0, 1);
SELECT pgmq.read('up_dead', 0, 1);
SELECT pgmq.read('up_dead', 0, 1);
SELECT pgmq.read('up_dead', 0, 2);
-- The partitioned queues: messages in several partitions, archived ones,
-- one read; topics route to them.
SELECT pgmq.send_batch('up_part', (SELECT array_agg(jsonb_build_object('p', i) ORDER BY i) FROM generate_series(1, 250) AS i));
SELECT pgmq.archive('up_part', ARRAY[1::bigint, 2, 150]);
SELECT pgmq.read('up_part', 600, 1);
SELECT pgmq.send_batch('up_time', ARRAY['{\"t\": 1}', '{\"t\": 2}', '{\"t\": 3}']::jsonb[]);
SELECT pgmq.archive('up_time', 1::bigint);
SELECT pgmq.bind_topic('orders.*', 'up_plain');
SELECT pgmq.bind_topic('orders.#', 'up_part');
" >/dev/null || fail "populating $SRC"
q "$SRC" "SELECT count(*) = 0 FROM partman.part_config_sub" | grep -qx t || fail "part_config_sub has rows"

snapshot "$SRC" >"$work/before.txt"
for row in '^q up_plain|6|' '^a up_time|1|' '^q up_unlogged|3|.*x-pgmq-dead-letter' '^part_config|pgmq.q_up_time|'; do
  grep -q "$row" "$work/before.txt" || fail "the snapshot has no row $row"
done
say "source: PostgreSQL $source_major, $(wc -l <"$work/before.txt") lines of state, queues: $QUEUES"

# docs/operations.md, "Upgrade PostgreSQL by dump and restore", on the old server:
native_to_range="CASE partition_type WHEN 'native' THEN 'range' ELSE partition_type END"
pg_dump -Fc -d "$SRC" -f "$work/app.dump" || fail "pg_dump"
psql -X -q -v ON_ERROR_STOP=1 -d "$SRC" -c "\copy (SELECT ${PART_CONFIG_COLUMNS/partition_type,/$native_to_range,} FROM partman.part_config) TO '$work/part_config.csv' WITH (FORMAT csv, HEADER)" ||
  fail "exporting pg_partman's configuration"
say "ok: pg_dump -Fc and pg_partman's configuration as CSV ($(($(wc -l <"$work/part_config.csv") - 1)) rows)"

# The target major's root filesystem, one user at a time (as test/run's run_in_rootfs).
root=$(ensure_rootfs "$target") || fail "no root filesystem for PostgreSQL $target"
exec {lock}>"$root.lock"
flock "$lock"
rm -rf "$root/pgmq-upgrade"
mkdir "$root/pgmq-upgrade"
tar -C "$repo" --exclude='*.o' --exclude='*.so' --exclude='*.d' --exclude=./build --exclude=./.git \
  --exclude=./results --exclude=./output_iso -cf - . | tar -C "$root/pgmq-upgrade" -xf -
inner=tmp/pgmq-upgrade.$$
mkdir -p "$root/$inner"
cp "$work/app.dump" "$work/part_config.csv" "$work/before.txt" "$root/$inner/"
chmod -R a+rwX "$root/$inner"
chmod -R a+rX "$root/pgmq-upgrade"
in_rootfs "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 PG_MAJOR="$target" \
  PGMQ_IN_ROOTFS=1 bash /pgmq-upgrade/test/integration/upgrade_dump_restore.sh --in-root "/$inner"
