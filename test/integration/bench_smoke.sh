#!/usr/bin/env bash
# The benchmark in miniature (bench/run --smoke, then bench/streams.sh
# --smoke) against the running test cluster (PGHOST/PGPORT/PGUSER), which it
# must not restart: it runs and prints every metric line, so bench/ cannot
# rot. Numbers are not checked.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=$(bench/run --smoke --existing 2>&1) || { echo "$out"; echo "bench/run --smoke failed"; exit 1; }

# Wake-up is measured in the preload mode the cluster already runs in.
mode=not_preloaded
psql -X -At -d postgres -c 'SHOW shared_preload_libraries' | grep -qw pgmq && mode=preloaded

expected=()
for sync in off; do  # the smoke leaves synchronous_commit = on out
  for op in send_c1 send_c4 send_batch100_c1 read10_delete_c1 read10_delete_c4 read10_archive_c1 pop_c1; do
    for m in "${op}_sync_$sync msgs/s" "${op}_sync_${sync}_cpu us/msg"; do
      read -r name unit <<<"$m"
      expected+=("$name $unit" "${name}_baseline $unit" "$name ratio_vs_baseline")
    done
  done
done
for op in send_dedup_c1 read10_delete_dead_letter_c1 read10_delete_c64; do
  for m in "${op}_sync_off msgs/s" "${op}_sync_off_cpu us/msg"; do
    read -r name unit <<<"$m"
    expected+=("$name $unit" "${name}_baseline $unit" "$name ratio_vs_baseline")
  done
done
expected+=("backlog_messages messages")
for side in "" _baseline; do
  expected+=("backlog_read_25pct_vs_100pct$side ratio" "backlog_autovacuums$side vacuums")
  expected+=("backlog_tx_p50_worst_vs_start$side ratio" "backlog_tx_p99_worst_vs_start$side ratio")
  for left in 100 75 50 25; do
    expected+=("backlog_read_ms_at_${left}pct$side ms" "backlog_tx_p50_ms_at_${left}pct$side ms"
      "backlog_tx_p99_ms_at_${left}pct$side ms")
  done
done
# Sustained load (bench/sustained.sh): WAL per message against both references,
# and the steady load with a held snapshot, for pgmq and both references.
for op in wal_send wal_read10_delete wal_read10_archive; do
  expected+=("$op B/msg" "${op}_baseline B/msg" "${op}_upstream B/msg" "$op ratio_vs_baseline"
    "$op ratio_vs_upstream")
done
for side in "" _baseline _upstream; do
  expected+=("held_snapshot_table$side bytes" "held_snapshot_indexes$side bytes" "steady_free$side tx/s"
    "steady_held$side tx/s" "steady_after$side tx/s" "held_vs_free$side ratio" "after_vs_free$side ratio")
done
expected+=("many_queues queues" "plan_cache_context_before bytes" "plan_cache_context_after bytes"
  "plan_memory_per_queue_hot bytes" "backend_memory_per_queue_hot bytes"
  "plan_memory_per_queue_all bytes" "backend_memory_per_queue_all bytes" "queue_first_use_in_backend ms"
  "many_queues_send_c1_sync_off msgs/s" "many_queues_send_c1_sync_off_one_queue msgs/s"
  "many_queues_send_c1_sync_off ratio_vs_one_queue" "many_queues_backend_memory bytes"
  "wakeup_trials_$mode trials" "wakeup_p50_$mode ms" "wakeup_p90_$mode ms" "wakeup_p99_$mode ms"
  "waiting_cpu_$mode %core")

# require_lines WHAT: every "name unit" of expected has a line in out.
require_lines() {
  local m name unit missing=0
  for m in "${expected[@]}"; do
    read -r name unit <<<"$m"
    # A number: digits, optional sign and fraction (latencies can be < 0).
    if ! grep -Eq "^$name -?[0-9]+(\.[0-9]+)? $unit\$" <<<"$out"; then
      echo "missing metric line: $name <number> $unit"
      missing=$((missing + 1))
    fi
  done
  if [ "$missing" -ne 0 ]; then
    echo "$out"
    exit 1
  fi
  echo "bench smoke: all ${#expected[@]} metric lines of $1 present"
}
require_lines bench/run

# bench/streams.sh in miniature (about 15 s): streams against topics and
# queues, with a snapshot held and without.
out=$(bench/streams.sh --smoke 2>&1) || { echo "$out"; echo "bench/streams.sh --smoke failed"; exit 1; }
expected=("queue_send msgs/s" "stream_send_g1_vs_queue ratio" "latency_trials trials")
for n in 1 4 16; do
  expected+=("stream_send_g$n msgs/s" "topic_send_q$n msgs/s" "stream_send_g${n}_vs_topic ratio")
  [ "$n" = 1 ] || expected+=("stream_send_g${n}_vs_g1 ratio")
done
for side in stream queue; do
  expected+=("${side}_consume_free msgs/s" "${side}_consume_held msgs/s" "${side}_held_vs_free ratio"
    "${side}_held_dead_rows rows" "${side}_latency_p50 ms" "${side}_latency_p99 ms")
done
expected+=("stream_held_other_rows rows")
require_lines bench/streams.sh
