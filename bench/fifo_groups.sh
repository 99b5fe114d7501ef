#!/usr/bin/env bash
# bench/fifo_groups.sh: the cost of one FIFO group read on a queue of 100,000
# messages in 1,000 groups (docs/fifo.md), for read_grouped, read_grouped_rr
# and read_grouped_head, with and without the group index. Each transaction
# claims QTY messages with vt 0, so they are visible again at once and every
# call sees the same queue.
# Then upstream's read_grouped algorithm (API.md §2.5, written here as one SQL
# statement: every visible message grouped, then a correlated check per
# candidate message that no earlier message of its group is in flight), one
# call each on smaller queues (100 messages per group): that check makes it
# quadratic, and at 100,000 messages a single call does not end in minutes.
#   PGHOST/PGPORT/PGUSER: the server (pgmq installed); SECONDS_PER_RUN (10)
#   MESSAGES (100000), NGROUPS (1000), QTY (10), UPSTREAM_SIZES ("2500 5000 10000")
set -euo pipefail

DB=pgmq_bench_fifo
SECS=${SECONDS_PER_RUN:-10}
MESSAGES=${MESSAGES:-100000}
NGROUPS=${NGROUPS:-1000}
QTY=${QTY:-10}
work=$(mktemp -d /tmp/pgmq-bench-fifo.XXXXXX)
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1; rm -rf "$work"' EXIT

q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$*"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
q "CREATE EXTENSION pgmq"
q "SELECT pgmq.create('bench_fifo')" >/dev/null
q "INSERT INTO pgmq.q_bench_fifo (vt, message, headers)
   SELECT clock_timestamp() - interval '1 minute', jsonb_build_object('i', i), jsonb_build_object('x-pgmq-group', 'g' || i % $NGROUPS)
     FROM generate_series(0, $MESSAGES - 1) AS i"
q "VACUUM ANALYZE pgmq.q_bench_fifo"

# run LABEL SQL: average latency (ms) of SQL as a pgbench transaction.
run() {
  local label=$1 sql=$2 out
  printf '%s\n' "$sql" >"$work/script.sql"
  out=$(pgbench -n -c 1 -T "$SECS" -f "$work/script.sql" "$DB" 2>&1) || {
    echo "$out"
    return 1
  }
  printf '%-44s %10s ms\n' "$label" "$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' <<<"$out")"
}

echo "queue: $MESSAGES messages in $NGROUPS groups; qty $QTY; ${SECS}s per run; average latency per call"
for fn in read_grouped read_grouped_rr read_grouped_head; do
  run "$fn, no index" "SELECT count(*) FROM pgmq.$fn('bench_fifo', 0, $QTY);"
done
q "SELECT pgmq.create_fifo_index('bench_fifo')" >/dev/null
q "ANALYZE pgmq.q_bench_fifo"
for fn in read_grouped read_grouped_rr read_grouped_head; do
  run "$fn, group index" "SELECT count(*) FROM pgmq.$fn('bench_fifo', 0, $QTY);"
done
run "read (no groups), for scale" "SELECT count(*) FROM pgmq.read('bench_fifo', 0, $QTY);"

# --- upstream's algorithm, for comparison (not upstream's code) ----------------------
q "SELECT pgmq.create('bench_up')" >/dev/null
q "CREATE FUNCTION upstream_style_read_grouped(qty integer) RETURNS SETOF pgmq.message_record LANGUAGE sql AS \$\$
  WITH heads AS (
    SELECT coalesce(headers->>'x-pgmq-group', '_default_fifo_group') AS g, min(msg_id) AS head
      FROM pgmq.q_bench_up WHERE vt <= clock_timestamp() GROUP BY 1),
  locked AS (
    SELECT m.msg_id, h.g FROM pgmq.q_bench_up m JOIN heads h ON m.msg_id = h.head
     WHERE m.vt <= clock_timestamp() ORDER BY m.msg_id FOR UPDATE OF m SKIP LOCKED),
  prio AS (SELECT g, msg_id AS head, row_number() OVER (ORDER BY msg_id) AS p FROM locked),
  avail AS (
    SELECT m.msg_id, p.p, row_number() OVER (PARTITION BY p.g ORDER BY m.msg_id) AS r
      FROM pgmq.q_bench_up m JOIN prio p ON coalesce(m.headers->>'x-pgmq-group', '_default_fifo_group') = p.g
     WHERE m.vt <= clock_timestamp() AND m.msg_id >= p.head
       AND NOT EXISTS (SELECT 1 FROM pgmq.q_bench_up m2
                        WHERE coalesce(m2.headers->>'x-pgmq-group', '_default_fifo_group')
                              = coalesce(m.headers->>'x-pgmq-group', '_default_fifo_group')
                          AND m2.vt > clock_timestamp() AND m2.msg_id < m.msg_id)),
  picked AS (
    SELECT q.msg_id FROM pgmq.q_bench_up q
     WHERE q.msg_id IN (SELECT msg_id FROM avail ORDER BY p, r LIMIT qty) FOR UPDATE SKIP LOCKED)
  UPDATE pgmq.q_bench_up q SET vt = clock_timestamp(), read_ct = q.read_ct + 1, last_read_at = clock_timestamp()
    FROM picked WHERE q.msg_id = picked.msg_id
  RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
\$\$"
for size in ${UPSTREAM_SIZES:-2500 5000 10000}; do
  q "TRUNCATE pgmq.q_bench_up" >/dev/null
  q "INSERT INTO pgmq.q_bench_up (vt, message, headers)
     SELECT clock_timestamp() - interval '1 minute', jsonb_build_object('i', i), jsonb_build_object('x-pgmq-group', 'g' || i % ($size / 100))
       FROM generate_series(0, $size - 1) AS i"
  q "ANALYZE pgmq.q_bench_up"
  ms=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" <<SQL
SET statement_timeout = '300s';
SELECT extract(epoch FROM clock_timestamp()) AS t0 \\gset
SELECT count(*) FROM upstream_style_read_grouped($QTY) \\g /dev/null
SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric * 1000, 1);
SQL
)
  printf '%-44s %10s ms\n' "upstream's algorithm, $size messages (1 call)" "$ms"
done
