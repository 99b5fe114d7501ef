# bench/sustained.sh: the sustained-load measurements of bench/run (sourced
# by it; uses its metric, refill, pair and psql_q): WAL bytes per message,
# throughput while a snapshot is held, and many consumers. Each is measured
# for pgmq, the plain-SQL baseline (schema base, the same table shape) and
# upstream's logic (schema up: its layout, a vt index, and PL/pgSQL with
# EXECUTE), side by side.

declare -A SIDE_SCHEMA=([pgmq]=pgmq [base]=base [up]=up)
declare -A SIDE_SUFFIX=([pgmq]='' [base]=_base [up]=_up)
declare -A SIDE_NAME=([pgmq]='' [base]=_baseline [up]=_upstream)

lsn() { psql_q -At -c 'SELECT pg_current_wal_insert_lsn()'; }
wal_bytes_per() { psql_q -At -c "SELECT round(pg_wal_lsn_diff('$2', '$1') / $3)"; }

# ratio METRIC SIDE: ours / SIDE's, as "METRIC ratio_vs_SIDE" (lower is less WAL).
wal_ratio() {
  local name=$1 ref=$2 ours theirs
  ours=$(awk -v n="$name" '$1 == n && $3 == "B/msg" {print $2}' "$results" | tail -n 1)
  theirs=$(awk -v n="${name}_$ref" '$1 == n && $3 == "B/msg" {print $2}' "$results" | tail -n 1)
  metric "$name" "$(awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')" "ratio_vs_$ref"
}

# WAL bytes per message: WAL_MESSAGES sends (one per transaction), then reads
# of 10 with delete, then (refilled) with archive; a CHECKPOINT before each
# phase, so the first change to each page after it writes a full-page image,
# as in production.
wal_per_message() {
  local side schema suffix name start end n=$WAL_MESSAGES
  export PGOPTIONS="-c synchronous_commit=off"
  for side in pgmq base up; do
    schema=${SIDE_SCHEMA[$side]} suffix=${SIDE_SUFFIX[$side]} name=${SIDE_NAME[$side]}
    refill "$schema" 0
    psql_q -c CHECKPOINT
    start=$(lsn)
    "$PG_BIN/pgbench" -n -M prepared -c 1 -t "$n" -f "$BENCH/send$suffix.sql" -D q=bq -D payload="$PAYLOAD" >/dev/null
    end=$(lsn)
    metric "wal_send$name" "$(wal_bytes_per "$start" "$end" "$n")" B/msg
    for ack in delete archive; do
      refill "$schema" "$n"
      psql_q -c CHECKPOINT
      start=$(lsn)
      "$PG_BIN/pgbench" -n -M prepared -c 1 -t $((n / 10)) -f "$BENCH/read_$ack$suffix.sql" -D q=bq >/dev/null
      end=$(lsn)
      metric "wal_read10_$ack$name" "$(wal_bytes_per "$start" "$end" "$n")" B/msg
    done
  done
  for name in wal_send wal_read10_delete wal_read10_archive; do
    wal_ratio "$name" baseline
    wal_ratio "$name" upstream
  done
  refill pgmq 0; refill base 0; refill up 0
  unset PGOPTIONS
}

# Steady send 1 + read 1 + delete, 2 clients, from a backlog of 1,000: its
# rate free, while a REPEATABLE READ transaction that has taken its snapshot
# stays open for HELD_SECONDS, and in the RECOVER_SECONDS after it ends.
held_snapshot() {
  local side schema suffix name free held after holder
  export PGOPTIONS="-c synchronous_commit=off"
  for side in pgmq base up; do
    schema=${SIDE_SCHEMA[$side]} suffix=${SIDE_SUFFIX[$side]} name=${SIDE_NAME[$side]}
    refill "$schema" 1000
    psql_q -c "VACUUM ANALYZE $schema.q_bq" -c CHECKPOINT
    free=$(steady_rate "$FREE_SECONDS" "steady$suffix.sql")
    psql_q -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM $schema.q_bq" \
      -c "SELECT pg_sleep($HELD_SECONDS)" -c COMMIT >/dev/null &
    holder=$!
    sleep 0.5
    held=$(steady_rate "$HELD_SECONDS" "steady$suffix.sql")
    wait "$holder"
    metric "held_snapshot_table$name" "$(psql_q -At -c "SELECT pg_relation_size('$schema.q_bq')")" bytes
    metric "held_snapshot_indexes$name" "$(psql_q -At -c "SELECT pg_indexes_size('$schema.q_bq')")" bytes
    after=$(steady_rate "$RECOVER_SECONDS" "steady$suffix.sql")
    metric "steady_free$name" "$free" tx/s
    metric "steady_held$name" "$held" tx/s
    metric "steady_after$name" "$after" tx/s
    metric "held_vs_free$name" "$(awk -v a="$held" -v b="$free" 'BEGIN {printf "%.3f", a / b}')" ratio
    metric "after_vs_free$name" "$(awk -v a="$after" -v b="$free" 'BEGIN {printf "%.3f", a / b}')" ratio
    refill "$schema" 0
  done
  unset PGOPTIONS
}

# steady_rate SECONDS SCRIPT: transactions per second of the steady load.
steady_rate() {
  "$PG_BIN/pgbench" -n -M prepared -c 2 -j 2 -T "$1" -f "$BENCH/$2" -D q=bq -D payload="$PAYLOAD" 2>&1 |
    sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# 64 consumers reading 10 at a time (and deleting them) from one queue.
many_consumers() {
  export PGOPTIONS="-c synchronous_commit=off"
  pair read10_delete_c64_sync_off 64 10 1 read_delete.sql read_delete_base.sql
  unset PGOPTIONS
}
