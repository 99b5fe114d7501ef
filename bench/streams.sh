#!/usr/bin/env bash
# bench/streams.sh: streams with consumer groups (docs/streams.md) against
# what an application would otherwise use, in one run (~3 minutes on 2 cores).
#
#   send      one message per transaction to a stream with 1, 4 and 16
#             subscribed groups (target: the same rate whatever the number
#             of groups), against pgmq.send_topic to as many queues
#             (docs/topics.md) and a plain pgmq.send to one queue.
#   held      a steady load (send 10, then read 10 and acknowledge them) on
#             a stream while another connection holds a REPEATABLE READ
#             snapshot, open and idle, against the same without it (target:
#             >= 0.9 of the rate), and the dead rows it leaves in the
#             stream's tables (target: none); a queue beside it (send 10,
#             read 10, delete them).
#   backlog   a group catching up on a backlog (read_stream 10 + ack),
#             beside a queue's consumer (read 10 + delete).
#   latency   from a send's COMMIT to a waiting read_stream_with_poll
#             returning the message (median and p99), beside read_with_poll
#             on a queue (bench/streams_latency.py).
#
#   bench/streams.sh [--smoke] [--seconds N] [--trials N]
#
# Uses the server of PGHOST/PGPORT/PGUSER (pgmq installed), in a database of
# its own dropped at the end, e.g. `bash test/dev.sh PORT bench/streams.sh`.
# Output: one line per metric, "metric value unit", then a table.
#
# The machine may be busy with other work, which would skew figures measured
# one after the other: so the cases compared run in ONE pgbench client that
# picks one of their scripts at random for each transaction. A case's rate is
# 1 / its transactions' average latency (what the client alone would do),
# and every case sees the same load: send, one run of 7 cases for 1.5 x
# --seconds (12); held, one run of the stream and the queue for --seconds
# in each phase; backlog, one run.
# synchronous_commit = off throughout: the server's work is measured, not the
# disk's flush.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_RUN=12 TRIALS=300 BACKLOG=20000
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) SECONDS_PER_RUN=2 TRIALS=10 BACKLOG=1000 ;;
    --seconds) SECONDS_PER_RUN=$2; shift ;;
    --trials) TRIALS=$2; shift ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
SEND_SECONDS=$((SECONDS_PER_RUN * 3 / 2))

DB=pgmq_bench_streams
BENCH=$PWD/bench
PAYLOAD='{"event": "order.created", "order_id": 123456789, "customer": "customer-000042", "amount": 99.95, "n": 3}'
GROUP_COUNTS="1 4 16"
work=$(mktemp -d /tmp/pgmq-bench-streams.XXXXXX)
results=$work/results
: >"$results"
holder=

cleanup() {
  touch "$work/release"
  [ -z "$holder" ] || wait "$holder" 2>/dev/null || true
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export PGOPTIONS="-c synchronous_commit=off"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$*"; }

# metric NAME VALUE UNIT: prints a result line and keeps it for the table.
metric() { printf '%s %s %s\n' "$1" "$2" "$3" | tee -a "$results"; }
value() { awk -v n="$1" '$1 == n {v = $2} END {print v}' "$results"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}'; }

# mix "-T SECONDS"|"-t TRANSACTIONS" SCRIPT... [-- VAR=VALUE...]: one client
# running the scripts interleaved at random; prints each script's average
# transaction latency (ms, from pgbench's log of every transaction), in order.
mix() {
  local length=$1 args=() out n=0
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=(-f "$1"); shift; n=$((n + 1)); done
  [ $# -eq 0 ] || shift
  for v in "$@"; do args+=(-D "$v"); done
  rm -f "$work"/tx.*
  out=$(pgbench -n -M prepared -c 1 $length -l --log-prefix="$work/tx" -D payload="$PAYLOAD" "${args[@]}" "$DB" 2>&1) ||
    { echo "$out" >&2; return 1; }
  # Each line: client, transaction, latency (us), script number, ...
  cat "$work"/tx.* | awk -v n="$n" '{sum[$4] += $3; count[$4]++}
    END {for (i = 0; i < n; i++) printf "%.4f ", count[i] ? sum[i] / count[i] / 1000 : 0; print ""}'
}

# per_second LATENCY_MS MESSAGES_PER_TRANSACTION: the rate of one client.
per_second() { awk -v l="$1" -v k="$2" 'BEGIN {printf "%.0f", (l > 0) ? 1000 * k / l : 0}'; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
q "SET client_min_messages = warning; CREATE EXTENSION pgmq"
# pgstattuple counts a table's dead row versions exactly; without it, the
# statistics' n_dead_tup.
dead_counter=n_dead_tup
q "CREATE EXTENSION pgstattuple" >/dev/null 2>&1 && dead_counter=pgstattuple

echo "# $(nproc) cores, $(q 'SELECT version()' | cut -d, -f1); synchronous_commit = off"
start=$SECONDS

# --- send: a stream with 1, 4, 16 groups; topics to as many queues ----------
q "SELECT pgmq.create('plain')" >/dev/null
cases=queue
echo "SELECT * FROM pgmq.send('plain', :payload);" >"$work/queue.sql"
for n in $GROUP_COUNTS; do
  q "SELECT pgmq.create_stream('s$n')" >/dev/null
  q "SELECT pgmq.subscribe('s$n', 'g' || i) FROM generate_series(1, $n) AS i" >/dev/null
  q "SELECT pgmq.create('t${n}_' || i), pgmq.bind_topic('bench.k$n', 't${n}_' || i) FROM generate_series(1, $n) AS i" >/dev/null
  echo "SELECT * FROM pgmq.send('s$n', :payload);" >"$work/stream$n.sql"
  echo "SELECT pgmq.send_topic('bench.k$n', :payload);" >"$work/topic$n.sql"
  cases+=" stream$n topic$n"
done
scripts=()
for c in $cases; do scripts+=("$work/$c.sql"); done
mix "-T 1" "${scripts[@]}" >/dev/null  # warm-up: plans, caches, the first partitions

read -r -a latency <<<"$(mix "-T $SEND_SECONDS" "${scripts[@]}")"
declare -A lat=()
i=0
for c in $cases; do lat[$c]=${latency[$i]}; i=$((i + 1)); done
echo "# send: ms per transaction:$(for c in $cases; do printf ' %s %s' "$c" "${lat[$c]}"; done)" >&2
metric queue_send "$(per_second "${lat[queue]}" 1)" msgs/s
for n in $GROUP_COUNTS; do
  metric "stream_send_g$n" "$(per_second "${lat[stream$n]}" 1)" msgs/s
  metric "topic_send_q$n" "$(per_second "${lat[topic$n]}" 1)" msgs/s
done
# The stream's rate / the reference's: the inverse of their latencies' ratio.
metric stream_send_g1_vs_queue "$(div "${lat[queue]}" "${lat[stream1]}")" ratio
for n in $GROUP_COUNTS; do
  [ "$n" = 1 ] || metric "stream_send_g${n}_vs_g1" "$(div "${lat[stream1]}" "${lat[stream$n]}")" ratio
  metric "stream_send_g${n}_vs_topic" "$(div "${lat[topic$n]}" "${lat[stream$n]}")" ratio
done

# --- held: consuming while a REPEATABLE READ snapshot is held ----------------
# A steady load: each transaction sends 10 messages, then a consumer reads
# them (a group: read_stream 10 + ack; a queue: read 10 + delete), so the
# consumer keeps up, as it does in production. A stream and a queue of their
# own for each phase, so both phases start from the same state.

# setup NAME: the stream hs_NAME (group g) and the queue hq_NAME.
setup() {
  q "SELECT pgmq.create_stream('hs_$1')" >/dev/null
  q "SELECT pgmq.subscribe('hs_$1', 'g')" >/dev/null
  q "SELECT pgmq.create('hq_$1')" >/dev/null
}

# message_tables NAME [stream|queue]: a query for the tables that hold the
# messages (the stream's partitions, the queue's table).
message_tables() {
  local stream="SELECT relid FROM pg_partition_tree('pgmq.q_hs_$1') WHERE isleaf UNION ALL
    SELECT 'pgmq.q_hs_$1'::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree('pgmq.q_hs_$1') WHERE isleaf)"
  local queue="SELECT 'pgmq.q_hq_$1'::regclass"
  case ${2:-} in
    stream) echo "$stream" ;;
    queue) echo "$queue" ;;
    *) echo "$stream UNION ALL $queue" ;;
  esac
}

# dead_rows NAME SIDE: the dead row versions in the side's message tables.
dead_rows() {
  if [ "$dead_counter" = pgstattuple ]; then
    q "SELECT coalesce(sum((pgstattuple(t.relid)).dead_tuple_count), 0) FROM ($(message_tables "$1" "$2")) AS t (relid)"
  else
    q "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relid IN ($(message_tables "$1" "$2"))"
  fi
}

# table_writes: "table|rows updated + deleted" for each table of the
# database (a backend's counters arrive when it exits).
table_writes() { q "SELECT relid::regclass, n_tup_upd + n_tup_del FROM pg_stat_user_tables"; }

# hold_snapshot: another connection takes a REPEATABLE READ snapshot and stays
# idle in its transaction until release_snapshot.
hold_snapshot() {
  rm -f "$work/release"
  { echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"; echo "SELECT 1;"
    while [ ! -e "$work/release" ]; do sleep 0.1; done
    echo "COMMIT;"; } | psql -X -q -d "$DB" >/dev/null &
  holder=$!
  local i
  for ((i = 0; i < 200; i++)); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND state = 'idle in transaction' AND backend_xmin IS NOT NULL")" -ge 1 ] && return 0
    sleep 0.05
  done
  echo "the REPEATABLE READ snapshot was not taken" >&2
  return 1
}
release_snapshot() { touch "$work/release"; wait "$holder"; holder=; }

setup warm
mix "-T 1" "$BENCH/stream_steady.sql" "$BENCH/stream_steady_queue.sql" -- s=hs_warm g=g q=hq_warm >/dev/null
# Without the snapshot before and after the held phase (the rate without
# is their average), so that a change in the machine's load over the run
# moves both sides of the ratio alike.
declare -A free_ms=()
for phase in free1 held free2; do
  setup $phase
  dead_before_stream=$(dead_rows $phase stream) dead_before_queue=$(dead_rows $phase queue)
  writes_before=$(table_writes)
  [ $phase != held ] || hold_snapshot
  read -r stream_ms queue_ms <<<"$(mix "-T $SECONDS_PER_RUN" "$BENCH/stream_steady.sql" "$BENCH/stream_steady_queue.sql" \
    -- s="hs_$phase" g=g q="hq_$phase")"
  echo "# $phase: ms per transaction: stream $stream_ms queue $queue_ms" >&2
  if [ $phase != held ]; then
    free_ms[stream]+=" $stream_ms" free_ms[queue]+=" $queue_ms"
    continue
  fi
  metric stream_consume_held "$(per_second "$stream_ms" 10)" msgs/s
  metric queue_consume_held "$(per_second "$queue_ms" 10)" msgs/s
  # Counted while the snapshot is still held: nothing can remove them yet.
  metric stream_held_dead_rows $(($(dead_rows $phase stream) - dead_before_stream)) rows
  metric queue_held_dead_rows $(($(dead_rows $phase queue) - dead_before_queue)) rows
  # Rows updated or deleted in other tables meanwhile, each a row version
  # the snapshot keeps too: a stream's consumer group state (a queue's
  # read + delete writes only its own table).
  sleep 0.5  # pgbench's backend has exited and sent its counters
  mine=" $(q "SELECT string_agg(relid::regclass::text, ' ') FROM ($(message_tables $phase)) AS t (relid)") "
  others=$(awk -F'|' -v t="$mine" 'FNR == NR {b[$1] = $2; next}
    index(t, " " $1 " ") == 0 && $2 > b[$1] {d += $2 - b[$1]; names = names " " $1
      printf "# held: %d rows updated or deleted in %s\n", $2 - b[$1], $1 > "/dev/stderr"}
    END {print d + 0, names}' <(echo "$writes_before") <(table_writes))
  metric stream_held_other_rows "${others%% *}" rows
  release_snapshot
  # What the snapshot kept there goes before the next phase.
  for t in ${others#* }; do q "VACUUM $t"; done
done
for side in stream queue; do
  ms=$(awk '{printf "%.4f", ($1 + $2) / 2}' <<<"${free_ms[$side]}")
  metric "${side}_consume_free" "$(per_second "$ms" 10)" msgs/s
  metric "${side}_held_vs_free" "$(div "$(value "${side}_consume_held")" "$(value "${side}_consume_free")")" ratio
done

# --- backlog: a consumer catching up ------------------------------------------
# BACKLOG messages sent (in transactions of 100) before the group reads any,
# consumed 10 at a time (read_stream + ack; read + delete), about half of
# them in the run (TRANSACTIONS transactions, taking turns at random).
setup backlog
for name in hs_backlog hq_backlog; do
  pgbench -n -M prepared -c 1 -t $((BACKLOG / 100)) -f "$BENCH/send_batch.sql" -D q=$name -D payload="$PAYLOAD" "$DB" >/dev/null
done
for t in $(q "$(message_tables backlog)"); do q "VACUUM ANALYZE $t"; done
read -r stream_ms queue_ms <<<"$(mix "-t $((BACKLOG / 10))" "$BENCH/stream_read_ack.sql" "$BENCH/read_delete.sql" \
  -- s=hs_backlog g=g q=hq_backlog)"
metric backlog_messages "$BACKLOG" messages
metric stream_consume_backlog "$(per_second "$stream_ms" 10)" msgs/s
metric queue_consume_backlog "$(per_second "$queue_ms" 10)" msgs/s
metric stream_backlog_vs_queue "$(div "$queue_ms" "$stream_ms")" ratio

# --- latency: a send's commit to a waiting consumer --------------------------
PGDATABASE=$DB /usr/bin/python3 "$BENCH/streams_latency.py" --trials "$TRIALS" | tee -a "$results"

echo "# $((SECONDS - start)) s; dead rows counted with $dead_counter"

# --- the table ----------------------------------------------------------------
# A ratio above 1: the stream does better than the reference.
row() { printf '%-26s %9s   %-24s %9s %7s  %s\n' "$@"; }
plural() { [ "$1" = 1 ] && echo "$1 $2" || echo "$1 ${2}s"; }
echo
row "" stream reference "" ratio target
row "send, 1 group (msgs/s)" "$(value stream_send_g1)" "queue, pgmq.send" "$(value queue_send)" "$(value stream_send_g1_vs_queue)" ""
for n in $GROUP_COUNTS; do
  [ "$n" = 1 ] || row "send, $n groups" "$(value stream_send_g$n)" "stream, 1 group" "$(value stream_send_g1)" \
    "$(value stream_send_g${n}_vs_g1)" "1.0"
done
for n in $GROUP_COUNTS; do
  row "send, $(plural "$n" group)" "$(value stream_send_g$n)" "send_topic, $(plural "$n" queue)" \
    "$(value topic_send_q$n)" "$(value stream_send_g${n}_vs_topic)" ""
done
row "consume, snapshot held" "$(value stream_consume_held)" "no snapshot held" "$(value stream_consume_free)" \
  "$(value stream_held_vs_free)" ">= 0.9"
row "  queue: read + delete" "$(value queue_consume_held)" "no snapshot held" "$(value queue_consume_free)" \
  "$(value queue_held_vs_free)" ""
row "dead rows, snapshot held" "$(value stream_held_dead_rows)" "queue" "$(value queue_held_dead_rows)" "" "0"
row "  rows rewritten elsewhere" "$(value stream_held_other_rows)" "" "" "" ""
row "consume a backlog" "$(value stream_consume_backlog)" "queue" "$(value queue_consume_backlog)" \
  "$(value stream_backlog_vs_queue)" ""
row "latency p50 (ms)" "$(value stream_latency_p50)" "queue, read_with_poll" "$(value queue_latency_p50)" "" ""
row "latency p99 (ms)" "$(value stream_latency_p99)" "queue, read_with_poll" "$(value queue_latency_p99)" "" ""
