#!/usr/bin/env bash
# test/integration/partition_drained.sh: a known hazard of msg_id-partitioned
# queues with pg_partman 4.x, and how pgmq's maintenance avoids it
# (docs/partitioned-queues.md, "Queues that drain").
#
# pg_partman premakes id partitions relative to the highest id found in the
# child partitions. A queue that its consumers keep empty has no ids in them
# when maintenance runs, so it gets no new partitions however often the
# worker runs: after partition_interval x (premake + 1) messages in all, every
# message goes through the default partition. A queue that keeps a backlog is
# maintained normally. The same holds for an archive that is rarely written.
# Time-partitioned queues are not affected (infinite_time_partitions).
#
# This test asserts the hazard as observed with pg_partman's own worker
# (4.7.2), and that pgmq's maintenance does not have it: the recovery of the
# spilled archive row premakes from the queue's sequence, and a queue drained
# the same way but maintained by pgmq's worker never overruns, while
# retention counted from the sequence drops its empty old partitions. If
# pg_partman learns to premake from the sequence, the "hazard" checks fail:
# then turn them around. Takes about 45 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

part_setup pgmq_it_drained
sql "SELECT pgmq.create_partitioned('drained', '10', '1000', 2)" >/dev/null
sql "SELECT pgmq.create_partitioned('backlog', '10', '1000', 2)" >/dev/null
sql "SELECT pgmq.create_partitioned('drained_time', '2 seconds', '1 hour', 2)" >/dev/null
bgw_on 1

# Three rounds of 10 messages per queue. The consumer of 'drained' deletes
# every message; the one of 'backlog' leaves the newest behind. Sending and
# consuming share a transaction here, so that no maintenance run can fall
# between them: a consumer that keeps up has the same effect, most of the
# time. The worker runs every second; each round waits for several runs.
for round in 1 2 3; do
  spilled=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$PART_DB" --single-transaction <<'SQL'
\o /dev/null
SELECT pgmq.send_batch('drained', array_fill('{}'::jsonb, ARRAY[10]));
SELECT pgmq.send_batch('backlog', array_fill('{}'::jsonb, ARRAY[10]));
\o
SELECT coalesce(array_agg(msg_id)::text, '{}') FROM pgmq.q_drained_default;
\o /dev/null
SELECT pgmq.delete('drained', ARRAY(SELECT msg_id FROM pgmq.q_drained));
SELECT pgmq.delete('backlog', ARRAY(SELECT msg_id FROM pgmq.q_backlog
                                     WHERE msg_id < (SELECT max(msg_id) FROM pgmq.q_backlog)));
SQL
)
  if [ $round = 3 ]; then
    [ "$spilled" = "{30}" ] || fail "hazard: expected id 30 in the default partition of 'drained', found '$spilled'"
    say "ok: hazard: 'drained' overran its premade partitions after 30 messages in all"
  fi
  sleep 3
  say "after round $round: premade_until drained $(premade_until drained q), backlog $(premade_until backlog q)"
done
check "hazard: the worker premade nothing for 'drained' (ids up to 29 only)" \
  "SELECT premade_until = '29' FROM pgmq.partition_status('drained') WHERE parent_table = 'pgmq.q_drained'"
check "'backlog' was maintained: partitions premade to id 59" \
  "SELECT premade_until = '59' FROM pgmq.partition_status('backlog') WHERE parent_table = 'pgmq.q_backlog'"
check "time partitions are premade ahead of the clock for an empty queue" \
  "SELECT bool_and(runway_time > interval '1 second') FROM pgmq.partition_status('drained_time')"

# Round 4: all ten messages of 'drained' go to the default partition, and
# maintenance neither helps nor fails (its partitions are all empty).
sql "SELECT pgmq.send_batch('drained', array_fill('{}'::jsonb, ARRAY[10]))" >/dev/null
check "hazard: the next 10 messages all land in the default partition" \
  "SELECT count(*) = 10 FROM pgmq.q_drained_default"
bgw_off
maintain pgmq.q_drained
check "hazard: run_maintenance succeeds and premakes nothing" \
  "SELECT premade_until = '29' FROM pgmq.partition_status('drained') WHERE parent_table = 'pgmq.q_drained'"
# The archive was never written: its partitions were never premade either.
sql "SELECT pgmq.archive('drained', 40::bigint)" >/dev/null
check "hazard: the first archived message (id 40) lands in the archive's default partition" \
  "SELECT array_agg(msg_id) = '{40}' FROM pgmq.a_drained_default"
sql "SELECT count(*) FROM pgmq.delete('drained', ARRAY(SELECT msg_id FROM pgmq.q_drained))" >/dev/null

# ---------------------------------------------------------------------------
say "pgmq's maintenance: premade from the sequence, retention from the sequence"
# The spilled archive row (id 40) is recovered; the recovery premakes the
# queue and its archive from the queue's sequence.
out=$(sql "CALL pgmq.recover_partitioned_queue('drained')" 2>&1) || fail "recovery of drained: $out"
grep -q 'pgmq.a_drained: 1 messages moved' <<<"$out" || fail "recovery of drained: $out"
check "'drained' and its archive have partitions to id 69 (last id 40, premake 2)" \
  "SELECT bool_and(premade_until = '69' AND runway_messages = 29) FROM pgmq.partition_status('drained')"
maintain
say "ok: run_maintenance() succeeds"

# A queue drained the same way, this time maintained by pgmq's worker
# (every second), with a retention of 30 ids. pg_partman's worker is off:
# what keeps it going is pgmq's premaking from the sequence.
sql "SELECT pgmq.create_partitioned('kept', '10', '30', 2)" >/dev/null
pgmq_worker_on 1
for round in 1 2 3 4 5 6; do
  spilled=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$PART_DB" --single-transaction <<'SQL'
\o /dev/null
SELECT pgmq.send_batch('kept', array_fill('{}'::jsonb, ARRAY[10]));
\o
SELECT count(*) FROM pgmq.q_kept_default;
\o /dev/null
SELECT pgmq.delete('kept', ARRAY(SELECT msg_id FROM pgmq.q_kept));
SQL
)
  [ "$spilled" = 0 ] || fail "round $round: $spilled messages of 'kept' went to its default partition"
  sleep 2
  say "after round $round ($((round * 10)) messages): premade_until $(premade_until kept q), partitions $(sql "SELECT string_agg(substr(relname, 8), ',' ORDER BY (substring(relname FROM 9))::int)
      FROM pg_class WHERE relname ~ '^q_kept_p[0-9]+$'")"
done
say "ok: 60 messages, consumed as they came, never reached 'kept''s default partition"
check "'kept' keeps its runway: partitions premade to id 89 (last id 60, premake 2)" \
  "SELECT premade_until = '89' AND runway_messages = 29 FROM pgmq.partition_status('kept') WHERE parent_table = 'pgmq.q_kept'"
# Retention 30 from the newest id 60: partitions ending at or below 30 go,
# though the queue is empty (pg_partman would keep them all).
check "retention from the sequence dropped the empty partitions p0-p20, kept p30 on" \
  "SELECT string_agg(relname, ',' ORDER BY (substring(relname FROM 9))::int) = 'q_kept_p30,q_kept_p40,q_kept_p50,q_kept_p60,q_kept_p70,q_kept_p80'
     FROM pg_class WHERE relname ~ '^q_kept_p[0-9]+$'"
# The archive too is premade from the queue's sequence: the first message
# ever archived goes to a real partition.
archived=$(sql "SELECT pgmq.send('kept', '{}')")
sql "SELECT pgmq.archive('kept', $archived::bigint)" >/dev/null
check "the first archived message of 'kept' (id $archived) is in a real partition of the archive" \
  "SELECT tableoid <> 'pgmq.a_kept_default'::regclass FROM pgmq.a_kept WHERE msg_id = $archived"
pgmq_worker_off
maintain
say "ok: run_maintenance() succeeds"
