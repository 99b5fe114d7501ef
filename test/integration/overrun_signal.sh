#!/usr/bin/env bash
# test/integration/overrun_signal.sh: the overrun signal is not blind
# (issue 17). Against the real pg_partman (4.x or 5.x), with autovacuum off on
# the default partitions (so no ANALYZE ever refreshes pg_class.reltuples,
# which the old figure read, -1 shown as 0), no maintenance running:
#  - a spill into the default partition shows in
#    metrics().default_partition_length and partition_status's
#    default_partition_rows within 2 seconds, while the spilling session is
#    still connected and has not published its statistics yet, and as the
#    exact count once it has;
#  - the documented alert queries of docs/monitoring.md flag the queue;
#  - both read 0 right after CALL pgmq.recover_partitioned_queue;
#  - under a steady producer, partition_status's runway_seconds predicts
#    the time until the first message lands in the default partition to
#    within 20%, and the documented runway alert flags the queue.
# About 30 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

SPILL=2500
RATE_DELAY=0.02 # seconds between the steady producer's sends (about 45/s)

# ms: milliseconds since the epoch.
ms() { date +%s%3N; }

part_setup pgmq_it_signal
say "pg_partman $(sql "SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'")"
sql "SELECT pgmq.create_partitioned('sig', '1000', '1000000', 2)" >/dev/null
sql "ALTER TABLE pgmq.q_sig_default SET (autovacuum_enabled = off);
     ALTER TABLE pgmq.a_sig_default SET (autovacuum_enabled = off)"
RUNWAY=$(runway sig q)
say "runway of sig: $RUNWAY ids"

# ---------------------------------------------------------------------------
say "spill of $SPILL messages by a session that stays connected"
# Its first statement publishes its statistics (a session's first flush is
# immediate); the spill comes less than a second later, so PostgreSQL holds
# its counts back (PGSTAT_MIN_INTERVAL), and the sleep keeps the session busy
# rather than idle, so they stay unpublished for its 8 seconds.
# (Its stderr is dropped: the cleanup's DROP DATABASE ... WITH (FORCE) ends
# it if a check fails first.)
psql -X -q -v ON_ERROR_STOP=1 -d "$PART_DB" >/dev/null 2>&1 <<SQL &
SELECT 1;
SELECT count(*) FROM pgmq.send_batch('sig', array_fill('{"s": 1}'::jsonb, ARRAY[$((RUNWAY + SPILL))]));
SELECT pg_sleep(8);
SQL
producer=$!
wait_for "the spill is committed" 10 "SELECT EXISTS (SELECT 1 FROM pgmq.q_sig_default)"
t0=$(ms)
check "reltuples of the never-analysed default partition is still -1 (what the old figure read)" \
  "SELECT reltuples < 0 FROM pg_class WHERE oid = 'pgmq.q_sig_default'::regclass"
wait_for "default_partition_length > 0 within 2 s of the commit" 2 \
  "SELECT default_partition_length > 0 FROM pgmq.metrics('sig')"
check "partition_status's default_partition_rows > 0 too" \
  "SELECT default_partition_rows > 0 FROM pgmq.partition_status('sig') WHERE parent_table = 'pgmq.q_sig'"
check "and metrics_all's" "SELECT default_partition_length > 0 FROM pgmq.metrics_all() WHERE queue_name = 'sig'"
say "seen $(($(ms) - t0)) ms after the commit; the statistics say $(sql "SELECT n_live_tup FROM pg_stat_user_tables
  WHERE relid = 'pgmq.q_sig_default'::regclass") rows (the producer has not published them)"
alert=$(doc_example alert-default-partition monitoring.md)
flagged=$(sql "WITH alert AS (${alert%;}
) SELECT string_agg(queue_name, ',') FROM alert")
[ "$flagged" = sig ] || fail "the default-partition alert of docs/monitoring.md flagged '$flagged', expected sig"
say "ok: the documented default-partition alert flags sig"
wait "$producer" || fail "the spilling session failed"
wait_for "the exact count ($SPILL) once the session has published its statistics" 2 \
  "SELECT default_partition_length = $SPILL FROM pgmq.metrics('sig')"
check "reltuples is still -1: no ANALYZE ran" \
  "SELECT reltuples < 0 FROM pg_class WHERE oid = 'pgmq.q_sig_default'::regclass"

# ---------------------------------------------------------------------------
sql "CALL pgmq.recover_partitioned_queue('sig')" >/dev/null 2>&1 || fail "recover_partitioned_queue('sig') failed"
check "default_partition_length is 0 right after the recovery" \
  "SELECT default_partition_length = 0 FROM pgmq.metrics('sig')"
check "default_partition_rows is 0 for both tables" \
  "SELECT bool_and(default_partition_rows = 0) FROM pgmq.partition_status('sig')"
check "every message is still there" "SELECT count(*) = $((RUNWAY + SPILL)) FROM pgmq.q_sig"

# ---------------------------------------------------------------------------
# A steady producer into a queue with 499 ids of runway (5 partitions of
# 100): runway_seconds, read once the producer has sent about two
# partitions' worth, against the time the first message reaches the default
# partition (its enqueued_at: each send is a transaction of its own).
sql "SELECT pgmq.create_partitioned('steady', '100', '1000000', 4)" >/dev/null
sql "ALTER TABLE pgmq.q_steady_default SET (autovacuum_enabled = off)"
say "steady producer: one send every $RATE_DELAY s, runway $(runway steady q) ids"
psql -X -q -v ON_ERROR_STOP=1 -d "$PART_DB" -c "DO \$\$
   BEGIN
     FOR n IN 1 .. 700 LOOP
       PERFORM pgmq.send('steady', jsonb_build_object('n', n));
       COMMIT;
       PERFORM pg_sleep($RATE_DELAY);
     END LOOP;
   END \$\$" >/dev/null 2>&1 &
producer=$!
wait_for "the producer has sent 200 messages" 30 "SELECT count(*) >= 200 FROM pgmq.q_steady"
prediction=$(sql "SELECT clock_timestamp(), runway_seconds, runway_messages FROM pgmq.partition_status('steady')
  WHERE parent_table = 'pgmq.q_steady'")
IFS='|' read -r predicted_at predicted_seconds predicted_ids <<<"$prediction"
[ -n "$predicted_seconds" ] || fail "runway_seconds is NULL under a steady producer"
say "at $predicted_at: runway $predicted_ids ids, runway_seconds $predicted_seconds"
alert=$(doc_example alert-runway monitoring.md)
flagged=$(sql "WITH alert AS (${alert%;}
) SELECT string_agg(DISTINCT queue_name, ',' ORDER BY queue_name) FROM alert")
# (sig may be flagged too: its runway is measured against the burst that
# filled it seconds ago, which is what its last partition_interval of ids saw.)
[[ ",$flagged," == *,steady,* ]] || fail "the runway alert of docs/monitoring.md flagged '$flagged', expected steady"
say "ok: the documented runway alert flags steady ($flagged)"
wait_for "the producer overruns the runway" 40 "SELECT EXISTS (SELECT 1 FROM pgmq.q_steady_default)"
actual=$(sql "SELECT extract(epoch FROM min(enqueued_at) - '$predicted_at'::timestamptz) FROM pgmq.q_steady_default")
say "the first message reached the default partition $actual s after the prediction"
check "runway_seconds ($predicted_seconds) is within 20% of the true time to overrun ($actual)" \
  "SELECT abs($predicted_seconds - $actual) <= 0.2 * $actual"
kill "$producer" 2>/dev/null || true
wait "$producer" 2>/dev/null || true

# ---------------------------------------------------------------------------
# The documented alert queries that have not run yet, and every query of the
# postgres_exporter file, run here (the docs test runs monitoring.md's too).
for name in alert-oldest-visible alert-archive-growth; do
  sql "$(doc_example $name monitoring.md)" >/dev/null || fail "the $name example of docs/monitoring.md failed"
done
say "ok: the other alert queries of docs/monitoring.md run"
exporter=../../docs/postgres_exporter.yaml
if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  n=0
  while IFS= read -r -d '' query; do
    out=$(sql "$query") || fail "a query of $exporter failed: $query"
    n=$((n + 1))
  done < <(/usr/bin/python3 -c 'import sys, yaml
for name, spec in yaml.safe_load(open(sys.argv[1])).items():
    sys.stdout.write(spec["query"] + "\0")' "$exporter")
  [ "$n" -eq 6 ] || fail "$exporter: ran $n queries, expected 6"
  check "the exporter's partition query reports steady's runway_seconds" \
    "SELECT count(*) = 2 FROM pgmq.partition_status('steady')"
  say "ok: the $n queries of docs/postgres_exporter.yaml run"
else
  say "note: no python3 yaml module, docs/postgres_exporter.yaml not run"
fi
