#!/usr/bin/env bash
# bench/notify_contention.sh: concurrent senders on one queue with insert
# notifications on (docs/notify.md). Compares pgmq's trigger with upstream's
# algorithm (API.md §2.13, written here as a PL/pgSQL trigger: a plain UPDATE
# of the throttle row, which waits for every other sender's open transaction)
# and with no trigger at all. Two workloads, CLIENTS clients each:
#   autocommit  SELECT pgmq.send(...) alone
#   held        BEGIN; send; pg_sleep(HOLD_MS); COMMIT -- the sender's
#               transaction stays open a little after the insert, as an
#               application's does when the send is part of its own work.
# Each figure is the median of ROUNDS runs, the three triggers taking turns,
# so a machine shared with other work skews them alike.
#   PGHOST/PGPORT/PGUSER: the server (pgmq installed); SECONDS_PER_RUN (10),
#   CLIENTS (8), HOLD_MS (5), ROUNDS (3)
set -euo pipefail

DB=pgmq_bench_notify
SECS=${SECONDS_PER_RUN:-10}
CLIENTS=${CLIENTS:-8}
HOLD_MS=${HOLD_MS:-5}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d /tmp/pgmq-bench-notify.XXXXXX)
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1; rm -rf "$work"' EXIT

q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$*"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
q "CREATE EXTENSION pgmq"
q "SELECT pgmq.create('nq_none'), pgmq.create('nq_ours'), pgmq.create('nq_upstream')" >/dev/null
q "SELECT pgmq.enable_notify_insert('nq_ours', 0), pgmq.enable_notify_insert('nq_upstream', 0)" >/dev/null 2>&1

# Upstream's trigger algorithm, for comparison (not upstream's code).
q "CREATE FUNCTION upstream_style_notify() RETURNS trigger LANGUAGE plpgsql AS \$\$
DECLARE
  updated integer;
BEGIN
  UPDATE pgmq.notify_insert_throttle SET last_notified_at = clock_timestamp()
   WHERE queue_name = TG_ARGV[0]
     AND (throttle_interval_ms = 0
          OR clock_timestamp() - last_notified_at >= throttle_interval_ms * interval '1 millisecond');
  GET DIAGNOSTICS updated = ROW_COUNT;
  IF updated > 0 THEN
    PERFORM pg_notify('pgmq.q_' || TG_ARGV[0] || '.' || TG_OP, NULL);
  END IF;
  RETURN NEW;
END
\$\$"
q "DROP TRIGGER trigger_notify_queue_insert_listeners ON pgmq.q_nq_upstream;
   CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.q_nq_upstream
   DEFERRABLE FOR EACH ROW EXECUTE FUNCTION upstream_style_notify('nq_upstream')"

# tps WORKLOAD QUEUE: transactions per second of CLIENTS clients.
tps() {
  local workload=$1 queue=$2 out
  if [ "$workload" = autocommit ]; then
    printf "SELECT pgmq.send('%s', '{}');\n" "$queue" >"$work/script.sql"
  else
    printf "BEGIN;\nSELECT pgmq.send('%s', '{}');\nSELECT pg_sleep(%s);\nCOMMIT;\n" "$queue" "$(awk "BEGIN { print $HOLD_MS / 1000 }")" >"$work/script.sql"
  fi
  out=$(pgbench -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECS" -f "$work/script.sql" "$DB" 2>&1) || {
    echo "$out" >&2
    return 1
  }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -n 1
}

# median N...: the middle value.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "$CLIENTS clients, ${SECS}s per run, median of $ROUNDS; transactions per second"
printf '%-12s %-9s %12s %12s %12s\n' workload interval "no trigger" pgmq "upstream's"
for interval in 0 250; do
  q "SELECT pgmq.update_notify_insert('nq_ours', $interval), pgmq.update_notify_insert('nq_upstream', $interval)" >/dev/null
  for workload in autocommit held; do
    none=() ours=() upstream=()
    for ((round = 0; round < ROUNDS; round++)); do
      none+=("$(tps "$workload" nq_none)")
      ours+=("$(tps "$workload" nq_ours)")
      upstream+=("$(tps "$workload" nq_upstream)")
    done
    printf '%-12s %-9s %12.0f %12.0f %12.0f\n' "$workload" "${interval}ms" \
      "$(median "${none[@]}")" "$(median "${ours[@]}")" "$(median "${upstream[@]}")"
  done
done
