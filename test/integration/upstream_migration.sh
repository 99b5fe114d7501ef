#!/usr/bin/env bash
# test/integration/upstream_migration.sh: a database running upstream pgmq
# switches to this extension in place with ALTER EXTENSION pgmq UPDATE, keeps
# everything, works, and goes back (docs/compatibility.md).
#
# This repository cannot contain upstream's code, so for each tested upstream
# release test/lib/fake_upstream.py writes a TEST-ONLY install script from our
# own description of that release's catalog state (tables, types, functions
# as PL/pgSQL stand-ins, extension membership, pg_extension_config_dump
# entries). The script is put into the server's extension directory (found
# from the server itself, so this works with test/dev.sh's private
# installation and with the system installation test/run uses) and removed
# at the end; a file of the same name that was there before is put back.
#
# For each release:
#  1. CREATE EXTENSION pgmq VERSION '<release>' (the stand-in) and fill queues
#     in every state with the stand-in's functions: visible, leased, delayed,
#     archived, deleted (the sequence ahead of every stored id), unlogged,
#     partitioned by pg_partman over several partitions, a queue table in
#     the column order of an upgraded install, headers and FIFO groups with
#     upstream's GIN FIFO index, insert notifications with throttles, topic
#     bindings (each where the release has the feature), grants to an
#     application's role;
#  2. ALTER EXTENSION pgmq UPDATE (for one release, first refused because a
#     view of the user's reads pgmq.meta); every row, sequence position,
#     meta, throttle and binding row, grant, trigger, index name and
#     pg_partman row is identical; the extension's members are exactly a
#     fresh install's;
#  3. this extension's functions work on the result: leases and delays hold,
#     sends continue the sequences, notifications, topics, group reads on
#     the converted FIFO index, partition maintenance; a consumer drains
#     every queue into its archive;
#  4. for 1.13.1: back to the stand-in with scripts/switch_to_upstream.sql,
#     identical again, and forward again; then back and forward once more
#     while a producer and a consumer stay connected;
#  5. the queues are dropped and the pg_regress suite (without
#     extension_reload, which would replace the switched extension) runs in
#     the switched database (PGMQ_SWITCH_REGRESS: which releases, or "all").
# "own-1.13.1" is this extension's own earlier release (version '1.13.1').
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

RELEASES=${PGMQ_SWITCH_RELEASES:-"1.5.1 1.7.0 1.9.0 1.10.0 1.11.0 1.12.0 1.13.0 1.13.1 own-1.13.1"}
REGRESS_RELEASES=${PGMQ_SWITCH_REGRESS:-"1.5.1 1.13.1 own-1.13.1"}
OUR_VERSION=1.13.1+cpp.3
DB=pgmq_it_switch
FRESH=pgmq_it_switch_fresh
APP=pgmq_it_switch_app # a role with grants on pgmq's tables, as applications have
VIEW_RELEASE=1.12.0    # the release where a user's view over pgmq.meta first stops the switch
work=$(mktemp -d /tmp/pgmq-upstream-migration.XXXXXX)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/${PG_MAJOR:-15}/bin/pg_config}

say() { printf '[upstream_migration] %s\n' "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}
# q DB SQL...: runs SQL in DB, unaligned, tuples only, stopping at the first error.
q() {
  local db=$1
  shift
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$*"
}
# check DB DESCRIPTION SQL: the query must return t.
check() {
  local db=$1 what=$2 got
  shift 2
  got=$(q "$db" "$*" 2>&1) || fail "$what: query failed: $got"
  [ "$got" = t ] || fail "$what (got '$got')"
  say "ok: $what"
}
at_least() { # at_least RELEASE VERSION: whether RELEASE is VERSION or newer
  [ "$(printf '%s\n%s\n' "$2" "${1#own-}" | sort -V | head -n 1)" = "$2" ]
}

# --- the stand-in install scripts in the server's extension directory -------
extdir=$(q postgres "SELECT setting FROM pg_catalog.pg_config WHERE name = 'SHAREDIR'")/extension
[ -f "$extdir/pgmq.control" ] || fail "no pgmq.control in $extdir"
[ -f "$extdir/pgmq--1.13.1--$OUR_VERSION.sql" ] || fail "this build's update scripts are not installed in $extdir"
placed=()
cleanup() {
  local f
  for db in "$DB" "$FRESH"; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
  psql -X -q -d postgres -c "DROP ROLE IF EXISTS $APP" >/dev/null 2>&1 || true
  for f in "${placed[@]}"; do
    if [ -f "$work/saved/${f##*/}" ]; then
      cp -p "$work/saved/${f##*/}" "$f"
    else
      rm -f "$f"
    fi
  done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/saved"
# place_stand_in RELEASE: writes pgmq--RELEASE.sql, keeping a file it replaces.
place_stand_in() {
  local f=$extdir/pgmq--$1.sql
  if [ -f "$f" ] && [ ! -f "$work/saved/${f##*/}" ]; then
    cp -p "$f" "$work/saved/"
  fi
  placed+=("$f")
  /usr/bin/python3 "$repo/test/lib/fake_upstream.py" "$1" >"$f.tmp"
  chmod 644 "$f.tmp"
  mv "$f.tmp" "$f"
}

q postgres "DROP ROLE IF EXISTS $APP; CREATE ROLE $APP" >/dev/null

# --- a fresh install, the reference for the switched extension's objects ------
q postgres "DROP DATABASE IF EXISTS $FRESH" >/dev/null
q postgres "CREATE DATABASE $FRESH" >/dev/null
q "$FRESH" "CREATE EXTENSION pgmq" >/dev/null
# The extension's own objects: every member, functions with their result and
# language, types with their attributes; configuration tables; grants to
# pg_monitor on them.
members_sql="
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, 0)
       || CASE WHEN d.classid = 'pg_proc'::regclass THEN
            (SELECT ' -> ' || pg_catalog.pg_get_function_result(p.oid) || ' ' || l.lanname || ' ' || p.provolatile::text
               FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = d.objid)
          WHEN d.classid = 'pg_type'::regclass THEN
            (SELECT ' (' || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum) || ')'
               FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 WHERE t.oid = d.objid)
          ELSE '' END
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmq')
UNION ALL SELECT 'config ' || unnest(extconfig)::regclass::text FROM pg_extension WHERE extname = 'pgmq'
UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname LIKE 'pgmq%'
UNION ALL SELECT 'policy ' || polname FROM pg_policy WHERE polrelid = 'pgmq.meta'::regclass
ORDER BY 1"
q "$FRESH" "$members_sql" >"$work/members.fresh"

# snapshot DB: everything the switch must keep, as text (timestamps in UTC, at
# full precision; message rows as JSON without NULL fields, so that columns a
# release lacked and the switch added, NULL, and column order do not count).
snapshot() {
  local db=$1 name table
  {
    q "$db" "SET TIME ZONE 'UTC'; SELECT 'meta', queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta ORDER BY 2"
    if [ "$(q "$db" "SELECT to_regclass('pgmq.notify_insert_throttle') IS NOT NULL")" = t ]; then
      q "$db" "SET TIME ZONE 'UTC'; SELECT 'throttle', queue_name, throttle_interval_ms, last_notified_at
               FROM pgmq.notify_insert_throttle ORDER BY 2"
    fi
    if [ "$(q "$db" "SELECT to_regclass('pgmq.topic_bindings') IS NOT NULL")" = t ]; then
      q "$db" "SET TIME ZONE 'UTC'; SELECT 'binding', pattern, queue_name, bound_at FROM pgmq.topic_bindings ORDER BY 2, 3"
    fi
    q "$db" "SELECT 'table', c.relname, c.relkind, c.relpersistence, c.relispartition FROM pg_class c
             WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') AND c.relname ~ '^[qa]_' ORDER BY 2"
    q "$db" "SELECT 'index', tablename, indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename ~ '^[qa]_' ORDER BY 2, 3"
    # The application's grants everywhere in pgmq; pg_monitor's on queues (the
    # switch's GRANT ... ON ALL TABLES must not widen them).
    q "$db" "SELECT 'grant', c.relname, a.grantee::regrole, a.privilege_type, a.is_grantable
             FROM pg_class c, aclexplode(c.relacl) a
             WHERE c.relnamespace = 'pgmq'::regnamespace
               AND (a.grantee = '$APP'::regrole OR (a.grantee = 'pg_monitor'::regrole AND c.relname ~ '^[qa]_'))
             ORDER BY 2, 3, 4"
    q "$db" "SELECT 'trigger', tgrelid::regclass, tgname FROM pg_trigger WHERE NOT tgisinternal
             AND tgrelid::regclass::text ~ '^pgmq\.[qa]_' ORDER BY 2, 3"
    q "$db" "SELECT 'part_config', parent_table, control, partition_interval, premake, retention, retention_keep_table
             FROM partman.part_config WHERE parent_table LIKE 'pgmq.%' ORDER BY 2"
    q "$db" "SELECT 'partitions', inhparent::regclass, count(*) FROM pg_inherits
             WHERE inhparent::regclass::text LIKE 'pgmq.%' GROUP BY 2 ORDER BY 2"
    for name in $(q "$db" "SELECT queue_name FROM pgmq.meta ORDER BY 1"); do
      table=$(q "$db" "SELECT lower('$name')")
      q "$db" "SELECT 'sequence $name', last_value, is_called FROM pgmq.q_${table}_msg_id_seq"
      q "$db" "SET TIME ZONE 'UTC'; SELECT 'q $name', tableoid::regclass, jsonb_strip_nulls(to_jsonb(t))
               FROM pgmq.q_${table} t ORDER BY msg_id"
      q "$db" "SET TIME ZONE 'UTC'; SELECT 'a $name', tableoid::regclass, jsonb_strip_nulls(to_jsonb(t))
               FROM pgmq.a_${table} t ORDER BY msg_id"
    done
  } 2>&1
}

# fill RELEASE: queues in every state, through the functions of the
# installed extension (the stand-in's, or ours for own-1.13.1).
fill() {
  local rel=$1
  q "$DB" "
SELECT pgmq.create('sw_plain');
SELECT pgmq.create_unlogged('sw_unlogged');
SET pgmq_fake.legacy_order = on;
SELECT pgmq.create('SW_Mixed');
RESET pgmq_fake.legacy_order;
SELECT pgmq.create_partitioned('sw_part', '10', '100000');
-- sw_plain: 1, 2 leased; 3 archived; 4 deleted; 5 visible; 6 delayed; 7
-- sent and deleted, so the sequence is ahead of every stored id.
SELECT pgmq.send_batch('sw_plain',
       ARRAY['{\"n\": 1}', '{\"n\": 2}', '{\"n\": 3}', '{\"n\": 4}', '{\"n\": 5}']::jsonb[],
       ARRAY['{\"trace\": \"a\"}', NULL, '{}', NULL, '{\"k\": [1, 2]}']::jsonb[]);
SELECT count(*) FROM pgmq.read('sw_plain', 600, 2);
SELECT pgmq.send('sw_plain', '{\"n\": 6, \"text\": \"unicode: \u00e9 \\\"quoted\\\"\"}', 3600);
SELECT pgmq.archive('sw_plain', 3::bigint);
SELECT pgmq.delete('sw_plain', 4::bigint);
SELECT pgmq.send('sw_plain', '{\"n\": 7}');
SELECT pgmq.delete('sw_plain', 7::bigint);
SELECT pgmq.send_batch('sw_unlogged', ARRAY['{\"u\": 1}', '{\"u\": 2}', '{\"u\": 3}']::jsonb[]);
SELECT count(*) FROM pgmq.read('sw_unlogged', 600, 1);
SELECT pgmq.send('SW_Mixed', '{\"m\": 1}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.send('SW_Mixed', '{\"m\": 2}', '{\"x-pgmq-group\": \"g\"}'::jsonb);
SELECT pgmq.send('SW_Mixed', '{\"m\": 3}', '{\"x-pgmq-group\": \"h\"}'::jsonb);
SELECT pgmq.archive('SW_Mixed', ARRAY[1::bigint]);
-- sw_part: 35 messages over partitions of 10 ids; some archived, some leased.
SELECT pgmq.send_batch('sw_part', (SELECT array_agg(jsonb_build_object('p', i) ORDER BY i) FROM generate_series(1, 35) AS i));
SELECT pgmq.archive('sw_part', ARRAY[1::bigint, 2, 15, 31]);
SELECT count(*) FROM pgmq.read('sw_part', 600, 3);
GRANT SELECT ON pgmq.meta TO $APP;
-- As for a queue created by another role than the extension's installer,
-- or by an upstream that narrowed pg_monitor's access.
REVOKE SELECT ON pgmq.q_sw_unlogged, pgmq.q_sw_unlogged_msg_id_seq FROM pg_monitor;
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmq.q_sw_plain TO $APP WITH GRANT OPTION;
" >/dev/null || fail "$rel: filling the queues"
  if at_least "$rel" 1.9.0; then
    q "$DB" "SELECT pgmq.create_fifo_index('SW_Mixed')" >/dev/null || fail "$rel: create_fifo_index"
  fi
  if at_least "$rel" 1.8.0; then
    q "$DB" "SELECT pgmq.enable_notify_insert('sw_plain', 0); SELECT pgmq.enable_notify_insert('SW_Mixed', 100)
             ; SELECT pgmq.send('sw_plain', '{\"n\": 8}'); SELECT pgmq.delete('sw_plain', 8::bigint)" >/dev/null ||
      fail "$rel: enable_notify_insert"
  elif at_least "$rel" 1.7.0; then
    q "$DB" "SELECT pgmq.enable_notify_insert('sw_plain')" >/dev/null || fail "$rel: enable_notify_insert"
  fi
  if at_least "$rel" 1.11.0; then
    q "$DB" "SELECT pgmq.bind_topic('orders.*', 'sw_plain'); SELECT pgmq.bind_topic('#', 'SW_Mixed');
             SELECT pgmq.bind_topic('orders.#', 'sw_part')" >/dev/null || fail "$rel: bind_topic"
  fi
  if at_least "$rel" 1.8.0; then
    q "$DB" "GRANT SELECT, UPDATE ON pgmq.notify_insert_throttle TO $APP" >/dev/null || fail "$rel: grant"
  fi
}

# blocked_by_view RELEASE: a view of the user's over pgmq.meta stops the
# switch, which then changes nothing, rather than being dropped with the old table.
blocked_by_view() {
  local rel=$1 out
  q "$DB" "CREATE VIEW public.sw_queue_names AS SELECT queue_name FROM pgmq.meta" >/dev/null
  if out=$(q "$DB" "ALTER EXTENSION pgmq UPDATE" 2>&1); then
    fail "$rel: ALTER EXTENSION pgmq UPDATE succeeded over a view of pgmq.meta"
  fi
  case $out in
    *"objects of yours depend on"*"view public.sw_queue_names depends on"*) ;;
    *) fail "$rel: the failed switch does not name the view: $out" ;;
  esac
  check "$DB" "$rel: a view over pgmq.meta stops the switch, which changes nothing" "
    SELECT extversion = '$rel' FROM pg_extension WHERE extname = 'pgmq'
       AND (SELECT count(*) FROM public.sw_queue_names) = 4
       AND to_regnamespace('pgmq_switch_scratch') IS NULL"
  q "$DB" "DROP VIEW public.sw_queue_names" >/dev/null
}

# works RELEASE: this extension's functions on the switched queues.
works() {
  local rel=$1 before_seq
  check "$DB" "$rel: extversion is $OUR_VERSION" "SELECT extversion = '$OUR_VERSION' FROM pg_extension WHERE extname = 'pgmq'"
  check "$DB" "$rel: a 1.13-level client check on extversion passes (numeric prefix, SQL)" "
    SELECT (regexp_match(extversion, '^(\d+)\.(\d+)'))[1:2]::int[] >= ARRAY[1, 13]
       AND string_to_array(split_part(extversion, '+', 1), '.')::int[] >= ARRAY[1, 13, 1]
      FROM pg_extension WHERE extname = 'pgmq'"
  /usr/bin/python3 - "$(q "$DB" "SELECT extversion FROM pg_extension WHERE extname = 'pgmq'")" <<'EOF' || fail "$rel: semver client check"
import re, sys
# A semantic-versioning client: MAJOR.MINOR.PATCH[-prerelease][+build];
# build metadata does not take part in precedence, a prerelease would rank
# below the release.
m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?", sys.argv[1])
assert m, "not a semantic version: " + sys.argv[1]
core = tuple(int(x) for x in m.group(1, 2, 3))
assert m.group(4) is None, "a prerelease ranks below 1.13.1"
assert core >= (1, 13, 1), core
EOF
  say "ok: $rel: a semantic-version client sees 1.13.1"
  q "$DB" "$members_sql" >"$work/members.switched"
  diff -u "$work/members.fresh" "$work/members.switched" ||
    fail "$rel: the switched extension's objects differ from a fresh install's (above)"
  say "ok: $rel: the extension's members, types, configuration tables and policies are a fresh install's"

  check "$DB" "$rel: leased (1, 2) and delayed (6) messages stay hidden; 5 is read with its read_ct" "
    SELECT array_agg(msg_id || ':' || read_ct ORDER BY msg_id) = ARRAY['5:1'] FROM pgmq.read('sw_plain', 30, 10)"
  check "$DB" "$rel: set_vt makes a leased message visible, read counts on" "
    SELECT (SELECT count(*) FROM pgmq.set_vt('sw_plain', 1::bigint, 0)) = 1
       AND (SELECT array_agg(msg_id || ':' || read_ct) FROM pgmq.read('sw_plain', 30, 10)) = ARRAY['1:2']"
  before_seq=$(q "$DB" "SELECT last_value FROM pgmq.q_sw_plain_msg_id_seq")
  check "$DB" "$rel: a send continues after the highest id ever allocated" "
    SELECT pgmq.send('sw_plain', '{\"after\": \"switch\"}') = $before_seq + 1"
  check "$DB" "$rel: archive takes a switched row" "SELECT pgmq.archive('sw_plain', 5::bigint)"
  check "$DB" "$rel: the archived row keeps its history" "
    SELECT read_ct = 1 AND message = '{\"n\": 5}' AND headers = '{\"k\": [1, 2]}' AND last_read_at IS NOT NULL
      FROM pgmq.a_sw_plain WHERE msg_id = 5"
  check "$DB" "$rel: the unlogged queue is still unlogged and works" "
    SELECT relpersistence = 'u' FROM pg_class WHERE oid = 'pgmq.q_sw_unlogged'::regclass
       AND (SELECT count(*) FROM pgmq.read('sw_unlogged', 30, 10)) = 2"
  check "$DB" "$rel: the partitioned queue's rows span several partitions, msg_id is BY DEFAULT" "
    SELECT (SELECT count(DISTINCT tableoid) FROM pgmq.q_sw_part) >= 3
       AND (SELECT attidentity = 'd' FROM pg_attribute WHERE attrelid = 'pgmq.q_sw_part'::regclass AND attname = 'msg_id')"
  q "$DB" "SELECT pgmq.send('sw_part', '{\"after\": 1}')" >/dev/null || fail "$rel: send to sw_part"
  check "$DB" "$rel: a send to the partitioned queue lands in a real partition" "
    SELECT tableoid::regclass::text NOT LIKE '%default' FROM pgmq.q_sw_part ORDER BY msg_id DESC LIMIT 1"
  q "$DB" "CALL pgmq.run_partition_maintenance('sw_part')" >/dev/null 2>&1 || fail "$rel: run_partition_maintenance"
  check "$DB" "$rel: partition maintenance and partition_status work on the switched queue" "
    SELECT count(*) = 2 FROM pgmq.partition_status('sw_part')"
  check "$DB" "$rel: metrics_all reports every queue" "
    SELECT array_agg(queue_name ORDER BY queue_name) = ARRAY['SW_Mixed', 'sw_part', 'sw_plain', 'sw_unlogged']
       AND bool_and(total_messages > 0) FROM pgmq.metrics_all()"
  if at_least "$rel" 1.9.0; then
    check "$DB" "$rel: upstream's GIN FIFO index became the group-read btree, same name" "
      SELECT amname = 'btree' FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'pgmq.q_sw_mixed_fifo_idx'::regclass"
  fi
  check "$DB" "$rel: group reads follow the switched messages (g: 2 before h: 3)" "
    SELECT array_agg(message->>'m' ORDER BY msg_id) = ARRAY['2', '3'] FROM pgmq.read_grouped('SW_Mixed', 30, 2)"
  if at_least "$rel" 1.7.0; then
    check "$DB" "$rel: the insert trigger runs this version's function, with the queue name" "
      SELECT bool_and(pg_get_triggerdef(t.oid) LIKE '%pgmq.notify_queue_listeners(''' || m.queue_name || ''')')
             AND count(*) = $(at_least "$rel" 1.8.0 && echo 2 || echo 1)
        FROM pg_trigger t JOIN pgmq.meta m ON t.tgrelid = ('pgmq.q_' || lower(m.queue_name))::regclass
       WHERE t.tgname = 'trigger_notify_queue_insert_listeners'"
    psql -X -q -d "$DB" -c 'LISTEN "pgmq.q_sw_plain.INSERT"' -c "SELECT pgmq.send('sw_plain', '{\"notify\": 1}')" \
      -c 'SELECT 1' >"$work/listen.out" 2>&1 || fail "$rel: LISTEN and send"
    grep -q 'Asynchronous notification "pgmq.q_sw_plain.INSERT"' "$work/listen.out" ||
      fail "$rel: no notification after a send to sw_plain: $(cat "$work/listen.out")"
    say "ok: $rel: a send notifies listeners of pgmq.q_sw_plain.INSERT"
  fi
  if at_least "$rel" 1.11.0; then
    check "$DB" "$rel: topic routing uses the switched bindings" "SELECT pgmq.send_topic('orders.new', '{\"o\": 1}') = 3"
  fi
}

# consume: a consumer drains every queue into its archive with this
# extension's functions; nothing is left behind or read twice.
consume() {
  local rel=$1
  check "$DB" "$rel: a consumer drains every queue into its archive" "
    DO \$\$
    DECLARE q text; n bigint; total bigint; before_a bigint; t text;
    BEGIN
      FOR q IN SELECT queue_name FROM pgmq.meta LOOP
        t := lower(q);
        EXECUTE format('SELECT count(*) FROM pgmq.%I', 'q_' || t) INTO total;
        EXECUTE format('SELECT count(*) FROM pgmq.%I', 'a_' || t) INTO before_a;
        EXECUTE format('SELECT count(*) FROM pgmq.set_vt(%L, ARRAY(SELECT msg_id FROM pgmq.%I), 0)', q, 'q_' || t) INTO n;
        LOOP
          SELECT count(*) INTO n FROM pgmq.archive(q, ARRAY(SELECT msg_id FROM pgmq.read(q, 30, 7)));
          EXIT WHEN n = 0;
        END LOOP;
        EXECUTE format('SELECT count(*) FROM pgmq.%I', 'q_' || t) INTO n;
        IF n <> 0 THEN RAISE EXCEPTION 'queue % still has % messages', q, n; END IF;
        EXECUTE format('SELECT count(*) FROM pgmq.%I', 'a_' || t) INTO n;
        IF n <> before_a + total THEN RAISE EXCEPTION 'archive of % has % rows, expected %', q, n, before_a + total; END IF;
      END LOOP;
    END \$\$;
    SELECT true"
}

# live_switch: a producer and consumer that stay connected across the switch,
# with server-side prepared statements, carry on with this extension's
# functions (PostgreSQL re-plans a statement whose functions were dropped).
live_switch() {
  psql -X -q -d "$DB" -v upstream_version=1.13.1 -f "$repo/scripts/switch_to_upstream.sql" >/dev/null 2>&1 ||
    fail "live: back to upstream"
  /usr/bin/python3 - "$DB" <<'EOF' || fail "live: a connected producer and consumer across the switch"
import sys
import psycopg

db = sys.argv[1]
app = psycopg.connect(dbname=db, autocommit=True)
admin = psycopg.connect(dbname=db, autocommit=True)
send = "SELECT * FROM pgmq.send(%s, %s::jsonb)"
read = "SELECT msg_id, message FROM pgmq.read(%s, 30, 100)"
lang = ("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
        "WHERE p.oid = 'pgmq.send(text, jsonb)'::regprocedure")


def sends(first, last):
    return [app.execute(send, ("sw_unlogged", '{"live": %d}' % i), prepare=True).fetchone()[0]
            for i in range(first, last)]


before = sends(0, 6)  # prepared on the server from the first call on
got = app.execute(read, ("sw_unlogged",), prepare=True).fetchall()
assert app.execute(lang).fetchone()[0] == "sql", "upstream's send is not installed"
admin.execute("ALTER EXTENSION pgmq UPDATE")
assert app.execute(lang).fetchone()[0] == "c", "the switch did not happen"
after = sends(6, 9)
assert after[0] == before[-1] + 1, (before, after)
got_after = app.execute(read, ("sw_unlogged",), prepare=True).fetchall()
assert [r[0] for r in got_after] == after, (got_after, after)
assert {r[0] for r in got} >= set(before), (got, before)
EOF
  say "ok: live: a producer and a consumer connected across the switch carry on with prepared statements"
}

regress() {
  local rel=$1 tests
  tests=$(sed -n 's/^test: *//p' "$repo/test/schedule" | tr -s ' \t' '\n' | grep -vx 'extension_reload' | tr '\n' ' ')
  q "$DB" "SELECT pgmq.drop_queue(queue_name) FROM pgmq.meta; DROP OWNED BY $APP" >/dev/null ||
    fail "$rel: dropping the queues"
  # The suite installs pg_partman itself, as in a fresh database.
  q "$DB" "DROP EXTENSION pg_partman; DROP SCHEMA partman CASCADE" >/dev/null || fail "$rel: dropping pg_partman"
  mkdir -p "$work/regress-$rel"
  (cd "$repo" && "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" --inputdir=. \
    --outputdir="$work/regress-$rel" --bindir="$("$PG_CONFIG" --bindir)" --use-existing --dbname="$DB" $tests) \
    >"$work/regress-$rel.log" 2>&1 || {
    cat "$work/regress-$rel.log"
    cat "$work/regress-$rel/regression.diffs" 2>/dev/null || true
    fail "$rel: the pg_regress suite in the switched database"
  }
  say "ok: $rel: $(grep -Eo 'All [0-9]+ tests passed' "$work/regress-$rel.log") in the switched database"
}

for rel in $RELEASES; do
  say "=== $rel"
  q postgres "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
  q postgres "CREATE DATABASE $DB" >/dev/null
  q "$DB" "CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman" >/dev/null
  if [ "$rel" = own-1.13.1 ]; then
    # This extension as released at '1.13.1': the same objects under the old version name.
    q "$DB" "CREATE EXTENSION pgmq; UPDATE pg_extension SET extversion = '1.13.1' WHERE extname = 'pgmq'" >/dev/null
  else
    place_stand_in "$rel"
    q "$DB" "CREATE EXTENSION pgmq VERSION '$rel'" >/dev/null || fail "$rel: installing the stand-in"
  fi
  fill "$rel"
  snapshot "$DB" >"$work/before-$rel.txt"
  grep -q '^q sw_plain|' "$work/before-$rel.txt" || fail "$rel: the snapshot has no queue rows"
  grep -q "^grant|meta|$APP|SELECT|f" "$work/before-$rel.txt" || fail "$rel: the snapshot has no grants"
  [ "$rel" = "$VIEW_RELEASE" ] && blocked_by_view "$rel"
  q "$DB" "ALTER EXTENSION pgmq UPDATE" >"$work/update-$rel.log" 2>&1 || {
    cat "$work/update-$rel.log"
    fail "$rel: ALTER EXTENSION pgmq UPDATE"
  }
  say "ok: $rel: ALTER EXTENSION pgmq UPDATE"
  snapshot "$DB" >"$work/after-$rel.txt"
  if at_least "$rel" 1.7.0 && ! at_least "$rel" 1.8.0; then
    # 1.7's notifications had no throttle: the switch adds interval 0, which is the same.
    grep -qx 'throttle|sw_plain|0|1970-01-01 00:00:00+00' "$work/after-$rel.txt" ||
      fail "$rel: no throttle row for 1.7's notifications"
    sed -i '/^throttle|sw_plain|0|1970-01-01 00:00:00+00$/d' "$work/after-$rel.txt"
    say "ok: $rel: 1.7's unthrottled notifications got throttle interval 0"
  fi
  diff -u "$work/before-$rel.txt" "$work/after-$rel.txt" || fail "$rel: the switch changed the state (above)"
  say "ok: $rel: meta, throttles, bindings, queue tables, indexes, triggers, partitions, pg_partman rows, sequences and every message are kept"
  works "$rel"

  if [ "$rel" = 1.13.1 ]; then
    # A paused queue stops the way back, named, with nothing changed.
    psql -X -q -d "$DB" -c "SELECT pgmq.pause('sw_plain')" >/dev/null
    if psql -X -q -d "$DB" -v upstream_version=1.13.1 -f "$repo/scripts/switch_to_upstream.sql" \
      >"$work/back-paused.log" 2>&1 || ! grep -q 'paused queues: sw_plain' "$work/back-paused.log"; then
      cat "$work/back-paused.log"
      fail "back: a paused queue did not stop scripts/switch_to_upstream.sql"
    fi
    check "$DB" "back: refused while paused, still this extension" "
      SELECT extversion = '$OUR_VERSION' FROM pg_extension WHERE extname = 'pgmq'"
    psql -X -q -d "$DB" -c "SELECT pgmq.resume('sw_plain')" -c "SELECT pgmq.set_priority('sw_plain', 3)" >/dev/null
    if psql -X -q -d "$DB" -v upstream_version=1.13.1 -f "$repo/scripts/switch_to_upstream.sql" \
      >"$work/back-priority.log" 2>&1 || ! grep -q 'queues with priorities: sw_plain' "$work/back-priority.log"; then
      cat "$work/back-priority.log"
      fail "back: a queue with priorities did not stop scripts/switch_to_upstream.sql"
    fi
    psql -X -q -d "$DB" -c "SELECT pgmq.clear_priority('sw_plain')" >/dev/null
    say "ok: back: a paused queue, and one with priorities, stop the switch, naming them"
    snapshot "$DB" >"$work/ours.txt"
    psql -X -q -d "$DB" -v upstream_version=1.13.1 -f "$repo/scripts/switch_to_upstream.sql" \
      >"$work/back.log" 2>&1 || {
      cat "$work/back.log"
      fail "back to upstream: scripts/switch_to_upstream.sql"
    }
    check "$DB" "back: upstream's extension at 1.13.1, its functions in PL/pgSQL" "
      SELECT extversion = '1.13.1' FROM pg_extension WHERE extname = 'pgmq'
         AND (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
               WHERE p.oid = 'pgmq.read(text, integer, integer, jsonb)'::regprocedure) = 'plpgsql'"
    snapshot "$DB" >"$work/back.txt"
    diff -u "$work/ours.txt" "$work/back.txt" || fail "back: the way back changed the state (above)"
    say "ok: back: every queue, message, sequence, meta, throttle and binding row is kept"
    check "$DB" "back: upstream's functions send and read the queues" "
      SELECT (SELECT count(*) FROM pgmq.send('sw_plain', '{\"back\": 1}')) = 1
         AND (SELECT count(*) FROM pgmq.read('sw_part', 30, 100)) > 0"
    snapshot "$DB" >"$work/back2.txt"
    q "$DB" "ALTER EXTENSION pgmq UPDATE" >/dev/null 2>&1 || fail "forward again: ALTER EXTENSION pgmq UPDATE"
    snapshot "$DB" >"$work/forward.txt"
    diff -u "$work/back2.txt" "$work/forward.txt" || fail "forward again: the switch changed the state (above)"
    say "ok: forward again: switched back to $OUR_VERSION with everything kept"
    live_switch
  fi

  consume "$rel"
  if [ "$REGRESS_RELEASES" = all ] || [[ " $REGRESS_RELEASES " == *" $rel "* ]]; then
    regress "$rel"
  fi
done
say "passed"
