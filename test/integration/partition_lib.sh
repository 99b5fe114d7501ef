# shellcheck shell=bash
# Sourced by the partition_*.sh integration scripts (not executable, so
# test/run does not run it). Each script works in a database of its own, with
# pg_partman in schema partman and pgmq, and may point pg_partman's background
# worker at it; the EXIT trap puts the worker's settings back and drops the
# database, in that order.
#
# Needs PGHOST/PGPORT/PGUSER (test/run sets them) and a superuser role: the
# worker is configured with ALTER SYSTEM + pg_reload_conf().

PART_DB=
PART_BGW_SAVED=
BGW_HINT="
  While the worker is on, this waits for it. Is pg_partman's master background
  worker running? After 'Could not start dynamic pg_partman background process'
  in the server log, PostgreSQL restarts it only 10 minutes later."
PART_START=$SECONDS

# sql SQL...: runs the statements in the test database, unaligned, tuples
# only, stopping at the first error. Read as a script (not with -c), so each
# statement is its own transaction and a CALL may commit.
sql() {
  psql -X -q -At -v ON_ERROR_STOP=1 -d "$PART_DB" -f - <<<"$*"
}

# sql_admin SQL: the same in the maintenance database postgres.
sql_admin() {
  psql -X -q -At -v ON_ERROR_STOP=1 -d postgres -c "$*"
}

say() { printf '[%5ds] %s\n' $((SECONDS - PART_START)) "$*"; }

fail() {
  say "FAIL: $*"
  exit 1
}

# check DESCRIPTION SQL: the query must return t.
check() {
  local what=$1 got tries=0 errors
  shift
  errors=$(mktemp)
  # pg_partman's worker drops partitions meanwhile: a reader may lose a
  # deadlock to it (PostgreSQL aborts one of the two), and tries again.
  while ! got=$(sql "$*" 2>"$errors"); do
    tries=$((tries + 1))
    grep -q "deadlock detected" "$errors" && [ $tries -lt 3 ] && sleep 0.5 && continue
    fail "$what: query failed: $(cat "$errors")"
  done
  rm -f "$errors"
  [ "$got" = t ] || fail "$what (got '$got' from: $*)"
  say "ok: $what"
}

# expect_error DESCRIPTION PATTERN SQL: the statement must fail with a
# message matching PATTERN (grep -E).
expect_error() {
  local what=$1 pattern=$2 out
  shift 2
  if out=$(sql "$*" 2>&1); then
    fail "$what: succeeded, expected an error matching '$pattern'"
  fi
  grep -Eq "$pattern" <<<"$out" || fail "$what: error was: $out"
  say "ok: $what"
}

# wait_for DESCRIPTION SECONDS SQL: polls the query until it returns t.
# The deadline is kept in milliseconds: with whole seconds ($SECONDS) a
# limit of 2 could end after a little over 1.
wait_for() {
  local what=$1 limit=$2 deadline
  shift 2
  deadline=$(($(date +%s%3N) + limit * 1000))
  while [ "$(sql "$*")" != t ]; do
    [ "$(date +%s%3N)" -lt "$deadline" ] || fail "$what: not within ${limit}s ($*)${PART_BGW_SAVED:+$BGW_HINT}"
    sleep 0.2
  done
  say "ok: $what"
}

# part_setup NAME: creates the database NAME_<pid> with pg_partman and pgmq
# and installs the EXIT trap.
part_setup() {
  PART_DB="$1_$$"
  trap part_cleanup EXIT
  trap 'exit 130' INT TERM
  sql_admin "CREATE DATABASE \"$PART_DB\""
  sql "CREATE SCHEMA IF NOT EXISTS partman;
       CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
       CREATE EXTENSION IF NOT EXISTS pgmq;"
  say "database $PART_DB"
}

# bgw_on SECONDS: the background worker maintains only this database, every
# SECONDS seconds. (Listing only databases that have pg_partman matters: see
# docs/partitioned-queues.md, "pg_partman_bgw".)
bgw_on() {
  if [ -z "$PART_BGW_SAVED" ]; then
    # What ALTER SYSTEM had set before, to put back: "name=value" lines.
    PART_BGW_SAVED=$(sql_admin "SELECT string_agg(name || '=' || setting, E'\n') FROM pg_file_settings
      WHERE sourcefile LIKE '%postgresql.auto.conf' AND name IN ('pg_partman_bgw.dbname', 'pg_partman_bgw.interval')")
    PART_BGW_SAVED=${PART_BGW_SAVED:-none}
  fi
  sql_admin "ALTER SYSTEM SET pg_partman_bgw.dbname = '$PART_DB'"
  sql_admin "ALTER SYSTEM SET pg_partman_bgw.interval = $1"
  sql_admin "SELECT pg_reload_conf()" >/dev/null
  say "pg_partman_bgw: dbname $PART_DB, interval $1 s"
}

# bgw_off: the worker's settings as they were, and no worker left in this
# database. The worker's master process exits (and comes back only 10
# minutes later) when it cannot start a worker for a listed database, for
# example one that was dropped: so first unlist, then wait, then drop.
bgw_off() {
  [ -n "$PART_BGW_SAVED" ] || return 0
  local line
  sql_admin "ALTER SYSTEM RESET pg_partman_bgw.dbname"
  sql_admin "ALTER SYSTEM RESET pg_partman_bgw.interval"
  if [ "$PART_BGW_SAVED" != none ]; then
    while IFS= read -r line; do
      sql_admin "ALTER SYSTEM SET ${line%%=*} = '${line#*=}'"
    done <<<"$PART_BGW_SAVED"
  fi
  sql_admin "SELECT pg_reload_conf()" >/dev/null
  PART_BGW_SAVED=
  # The master rereads its settings when the reload wakes it; a worker it had
  # already started for this database finishes its run_maintenance().
  sleep 2
  local deadline=$((SECONDS + 30))
  while [ "$(sql_admin "SELECT count(*) FROM pg_stat_activity WHERE datname = '$PART_DB'
      AND backend_type LIKE 'pg_partman%'")" != 0 ] && [ $SECONDS -lt $deadline ]; do
    sleep 0.5
  done
  say "pg_partman_bgw: settings restored"
}

# pgmq_worker_on SECONDS: the pgmq maintenance worker (pgmq.maintenance_*)
# maintains only this database, every SECONDS seconds.
PART_PGMQ_SAVED=
pgmq_worker_on() {
  if [ -z "$PART_PGMQ_SAVED" ]; then
    PART_PGMQ_SAVED=$(sql_admin "SELECT string_agg(name || '=' || setting, E'\n') FROM pg_file_settings
      WHERE sourcefile LIKE '%postgresql.auto.conf' AND name IN ('pgmq.maintenance_database', 'pgmq.maintenance_interval')")
    PART_PGMQ_SAVED=${PART_PGMQ_SAVED:-none}
  fi
  sql_admin "ALTER SYSTEM SET pgmq.maintenance_database = '$PART_DB'"
  sql_admin "ALTER SYSTEM SET pgmq.maintenance_interval = $1"
  sql_admin "SELECT pg_reload_conf()" >/dev/null
  say "pgmq maintenance worker: database $PART_DB, interval $1 s"
}

# pgmq_worker_off: its settings as they were, and no worker of it left in
# this database.
pgmq_worker_off() {
  [ -n "$PART_PGMQ_SAVED" ] || return 0
  local line
  sql_admin "ALTER SYSTEM RESET pgmq.maintenance_database"
  sql_admin "ALTER SYSTEM RESET pgmq.maintenance_interval"
  if [ "$PART_PGMQ_SAVED" != none ]; then
    while IFS= read -r line; do
      sql_admin "ALTER SYSTEM SET ${line%%=*} = '${line#*=}'"
    done <<<"$PART_PGMQ_SAVED"
  fi
  sql_admin "SELECT pg_reload_conf()" >/dev/null
  PART_PGMQ_SAVED=
  local deadline=$((SECONDS + 30))
  while [ "$(sql_admin "SELECT count(*) FROM pg_stat_activity WHERE datname = '$PART_DB'
      AND backend_type = 'pgmq maintenance'")" != 0 ] && [ $SECONDS -lt $deadline ]; do
    sleep 0.2
  done
  say "pgmq maintenance worker: settings restored"
}

part_cleanup() {
  local status=$?
  set +e
  pgmq_worker_off
  bgw_off
  if [ -n "$PART_DB" ]; then
    sql_admin "DROP DATABASE IF EXISTS \"$PART_DB\" WITH (FORCE)"
  fi
  if [ $status -eq 0 ]; then
    say "PASS ($((SECONDS - PART_START)) s)"
  else
    say "FAILED (exit $status)"
  fi
  exit $status
}

# doc_example NAME [PAGE]: the ```sql block marked <!-- example: NAME --> in
# docs/PAGE (default partitioned-queues.md), so that the tests run the
# documented statements.
doc_example() {
  local text page=${2:-partitioned-queues.md}
  text=$(awk -v name="$1" '
    $0 ~ "<!-- example: " name " -->" { armed = 1; next }
    armed && /^[[:space:]]*```sql[[:space:]]*$/ { inblock = 1; armed = 0; next }
    inblock && /^[[:space:]]*```[[:space:]]*$/ { exit }
    inblock { print }
  ' "$(dirname "${BASH_SOURCE[0]}")/../../docs/$page")
  [ -n "$text" ] || fail "docs/$page has no example '$1'"
  printf '%s\n' "$text"
}

# maintain [PARENT]: partman.run_maintenance for one parent table, or for
# all without argument; fails on an error, and also when another session's
# run held partman's lock (the call then returns without doing anything).
maintain() {
  local call out
  call="SELECT partman.run_maintenance(${1:+'$1'})"
  out=$(sql "$call" 2>&1) || fail "$call: $out"
  ! grep -q 'already running' <<<"$out" || fail "$call did nothing: $out"
}

# runway QUEUE TABLE: runway_messages of the queue ('q') or archive ('a') row.
runway() {
  sql "SELECT runway_messages FROM pgmq.partition_status('$1') WHERE parent_table = 'pgmq.$2_' || lower('$1')"
}

# premade_until QUEUE TABLE: the same for premade_until.
premade_until() {
  sql "SELECT premade_until FROM pgmq.partition_status('$1') WHERE parent_table = 'pgmq.$2_' || lower('$1')"
}
