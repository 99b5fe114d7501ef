#!/usr/bin/env bash
# test/integration/maintenance_escalation.sh: partition maintenance never runs
# a queue owner's code with more privilege than that owner has, and never acts
# on a table it was not given (issue 10 section 2, issue 19 item 3 and
# "lower impact"). A tenant role with what docs/permissions.md gives a
# queue_owner (plus pg_partman's tables, for partitioned queues):
#  - replaces its queue table by a view calling its own function, which makes
#    it superuser when a superuser runs it: after pgmq's worker has run and
#    after a superuser's CALL pgmq.run_partition_maintenance() it is still not
#    superuser, and every other queue (the tenant's own, a superuser's) was
#    maintained regardless, as was a bad row in pgmq.meta;
#  - swaps one of its partitions for its own table named like another
#    queue's table: retention does not drop that other queue's table;
#  - puts a trigger on its queue and has a superuser recover it: the trigger
#    runs, as the tenant;
#  - holds pg_partman's maintenance lock: maintenance moves on at once;
#  - calls maintenance itself: its queues are maintained, the superuser's
#    skipped with a WARNING.
# The server log must show no crashed process. Takes about 20 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

SERVER_LOG=${PGMQ_SERVER_LOG:-$(dirname "${PGHOST:-/nonexistent}")/server.log}
LOG_START=$(stat -c %s "$SERVER_LOG" 2>/dev/null || echo 0)
APP="pgmq_it_app_$$"

part_setup pgmq_it_esc
escalation_cleanup() {
  local status=$?
  set +e
  pgmq_worker_off
  sql_admin "DROP DATABASE IF EXISTS \"$PART_DB\" WITH (FORCE)"
  sql_admin "DROP ROLE IF EXISTS $APP"
  PART_DB=
  [ $status -eq 0 ] && say "PASS ($((SECONDS - PART_START)) s)" || say "FAILED (exit $status)"
  exit $status
}
trap escalation_cleanup EXIT

not_superuser() {
  check "$APP is not superuser ($1)" "SELECT NOT rolsuper FROM pg_roles WHERE rolname = '$APP'"
}

# as_app SQL: the statements as the tenant.
as_app() { sql "SET ROLE $APP; $*"; }

sql_admin "CREATE ROLE $APP NOLOGIN"
sql "GRANT USAGE, CREATE ON SCHEMA pgmq TO $APP;
     GRANT SELECT, INSERT, DELETE ON pgmq.meta TO $APP;
     GRANT USAGE, CREATE ON SCHEMA partman TO $APP;
     GRANT ALL ON ALL TABLES IN SCHEMA partman TO $APP;
     GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA partman TO $APP;
     GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA partman TO $APP;
     CREATE SCHEMA tschema AUTHORIZATION $APP;"

# The tenant's function: makes it superuser when a superuser runs it, and
# records who ran it.
as_app "CREATE TABLE pgmq.evil_log (who name, super boolean);
  GRANT INSERT ON pgmq.evil_log TO PUBLIC;
  CREATE FUNCTION pgmq.evil() RETURNS bigint LANGUAGE plpgsql AS \$\$BEGIN
    INSERT INTO pgmq.evil_log SELECT current_user, rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
      EXECUTE 'ALTER ROLE $APP SUPERUSER';
    END IF;
    RETURN 1; END\$\$;
  CREATE FUNCTION pgmq.evil_trigger() RETURNS trigger LANGUAGE plpgsql AS \$\$BEGIN
    PERFORM pgmq.evil(); RETURN NEW; END\$\$;"

# Queues that must keep being maintained: the tenant's own and a superuser's.
as_app "SELECT pgmq.create_partitioned('ok_app', '10', '1000', 2)" >/dev/null
sql "SELECT pgmq.create_partitioned('ok_su', '10', '1000', 2)" >/dev/null
# A row no queue name can be: maintenance must skip it, not stop.
sql "INSERT INTO pgmq.meta VALUES ('x;y', false, false)"

# 10.2: the queue table becomes a view calling the tenant's function.
as_app "SELECT pgmq.create_partitioned('pe', '10', '1000', 2);
  DROP TABLE pgmq.q_pe CASCADE;
  CREATE VIEW pgmq.q_pe AS SELECT pgmq.evil() AS msg_id;"

# 19.3: a superuser's queue, and a tenant's queue whose oldest partition is
# swapped for the tenant's own empty table named like that queue's table.
sql "SELECT pgmq.create('victim')" >/dev/null
as_app "SELECT pgmq.create_partitioned('pr', '10', '20', 1);
  SELECT pgmq.send_batch('pr', array_fill('{}'::jsonb, ARRAY[45]));
  SELECT pgmq.purge_queue('pr');
  ALTER TABLE pgmq.q_pr DETACH PARTITION pgmq.q_pr_p0;
  CREATE TABLE tschema.q_victim (LIKE pgmq.q_pr INCLUDING ALL EXCLUDING IDENTITY);
  ALTER TABLE pgmq.q_pr ATTACH PARTITION tschema.q_victim FOR VALUES FROM (0) TO (10);" >/dev/null

send_ok() { sql "SELECT pgmq.send_batch('$1', array_fill('{}'::jsonb, ARRAY[$2]))" >/dev/null; }
premade() { sql "SELECT max(premade_until::bigint) FROM pgmq.partition_status('$1')"; }

# --- the worker, every second
send_ok ok_app 15
send_ok ok_su 15
pgmq_worker_on 1
wait_for "worker premade the tenant's queue past id 15 (to 39)" 20 \
  "SELECT max(premade_until::bigint) >= 39 FROM pgmq.partition_status('ok_app')"
wait_for "worker premade the superuser's queue too" 10 "SELECT max(premade_until::bigint) >= 39 FROM pgmq.partition_status('ok_su')"
sleep 2  # a few more runs over the view
not_superuser "after the worker's runs"
check "the view's function never ran as a superuser" "SELECT NOT EXISTS (SELECT FROM pgmq.evil_log WHERE super)"
check "the other queue's table pgmq.q_victim still exists (worker)" "SELECT to_regclass('pgmq.q_victim') IS NOT NULL"
check "the tenant's own attached table was not dropped as pgmq.q_victim" "SELECT to_regclass('tschema.q_victim') IS NOT NULL"
check "retention dropped the tenant's empty partitions below id 20" \
  "SELECT to_regclass('pgmq.q_pr_p10') IS NULL"
pgmq_worker_off

# --- a superuser's CALL
send_ok ok_app 20
send_ok ok_su 20
out=$(sql "CALL pgmq.run_partition_maintenance()" 2>&1) || fail "run_partition_maintenance failed: $out"
grep -q 'pgmq.q_pe' <<<"$out" || fail "no WARNING naming pgmq.q_pe: $out"
[ "$(grep -c 'WARNING:.*pgmq\.q_pe\b' <<<"$out")" = 1 ] || fail "not exactly one WARNING for pgmq.q_pe: $out"
grep -q 'x;y' <<<"$out" || fail "no WARNING for the bad pgmq.meta row: $out"
say "ok: one WARNING for the view, one for the bad meta row"
not_superuser "after a superuser's CALL pgmq.run_partition_maintenance()"
check "the CALL premade the tenant's queue past id 35 (to 59)" "SELECT max(premade_until::bigint) >= 59 FROM pgmq.partition_status('ok_app')"
check "the CALL premade the superuser's queue too" "SELECT max(premade_until::bigint) >= 59 FROM pgmq.partition_status('ok_su')"
check "the other queue's table pgmq.q_victim still exists (CALL)" "SELECT to_regclass('pgmq.q_victim') IS NOT NULL"
out=$(sql "CALL pgmq.run_partition_maintenance('pe')" 2>&1) || fail "run_partition_maintenance('pe') failed: $out"
not_superuser "after a superuser's CALL pgmq.run_partition_maintenance('pe')"

# The tenant's own CALL maintains its queue and skips the superuser's, whose
# privileges it lacks, with a WARNING (as VACUUM skips a table it does not own).
send_ok ok_app 20
send_ok ok_su 20
out=$(as_app "CALL pgmq.run_partition_maintenance()" 2>&1) || fail "the tenant's maintenance failed: $out"
grep -q 'skips pgmq.q_ok_su (queue "ok_su"): it belongs to role' <<<"$out" ||
  fail "no WARNING skipping the superuser's queue: $out"
check "the tenant's CALL premade its own queue (to 79)" "SELECT max(premade_until::bigint) >= 79 FROM pgmq.partition_status('ok_app')"
check "and left the superuser's alone" "SELECT max(premade_until::bigint) < 79 FROM pgmq.partition_status('ok_su')"

# --- recovery by a superuser runs the tenant's trigger as the tenant
as_app "SELECT pgmq.create_partitioned('pt', '10', '1000', 1);
  SELECT pgmq.send_batch('pt', array_fill('{}'::jsonb, ARRAY[45]));
  CREATE TRIGGER evil BEFORE INSERT ON pgmq.q_pt FOR EACH ROW EXECUTE FUNCTION pgmq.evil_trigger();" >/dev/null
check "messages spilled into the default partition" "SELECT count(*) > 0 FROM pgmq.q_pt_default"
sql "TRUNCATE pgmq.evil_log"
out=$(sql "CALL pgmq.recover_partitioned_queue('pt')" 2>&1) || fail "recover_partitioned_queue failed: $out"
not_superuser "after a superuser's CALL pgmq.recover_partitioned_queue()"
check "the recovery moved every message out of the default partition" \
  "SELECT count(*) = 0 FROM pgmq.q_pt_default"
check "the messages kept their ids" "SELECT count(*) = 45 AND max(msg_id) = 45 FROM pgmq.q_pt"
check "the trigger ran, as the tenant" \
  "SELECT count(*) > 0 AND bool_and(who = '$APP' AND NOT super) FROM pgmq.evil_log"

# --- pg_partman's maintenance lock held by another session: no wait
sql_lock="BEGIN; SELECT pg_advisory_xact_lock(hashtext('pg_partman run_maintenance')); SELECT pg_sleep(30); COMMIT;"
psql -X -q -At -d "$PART_DB" -c "SET ROLE $APP" -c "$sql_lock" >/dev/null 2>&1 &
locker=$!
wait_for "the tenant holds pg_partman's maintenance lock" 10 \
  "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid())"
started=$SECONDS
out=$(sql "SET lock_timeout = '20s'; CALL pgmq.run_partition_maintenance('ok_su')" 2>&1) || fail "maintenance failed: $out"
took=$((SECONDS - started))
kill "$locker" 2>/dev/null || true
wait "$locker" 2>/dev/null || true
[ $took -lt 5 ] || fail "maintenance waited ${took}s for pg_partman's lock"
grep -q "lock" <<<"$out" || fail "no WARNING about pg_partman's lock: $out"
say "ok: maintenance moved on at once (${took}s) with a WARNING while pg_partman's lock was held"

# --- no crashed process
if [ -r "$SERVER_LOG" ]; then
  if tail -c +"$((LOG_START + 1))" "$SERVER_LOG" | grep -E "terminated by signal|was terminated by exception"; then
    fail "a server process crashed (see $SERVER_LOG)"
  fi
  say "ok: no crashed process in $SERVER_LOG"
else
  fail "server log $SERVER_LOG not readable (set PGMQ_SERVER_LOG)"
fi
