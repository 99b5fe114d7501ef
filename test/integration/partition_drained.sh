#!/usr/bin/env bash
# test/integration/partition_drained.sh: a known hazard of msg_id-partitioned
# queues with pg_partman 4.x, and its workaround (docs/partitioned-queues.md,
# "Queues that drain").
#
# pg_partman premakes id partitions relative to the highest id found in the
# child partitions. A queue that its consumers keep empty has no ids in them
# when maintenance runs, so it gets no new partitions however often the
# worker runs: after partition_interval x (premake + 1) messages in all, every
# message goes through the default partition. A queue that keeps a backlog is
# maintained normally. The same holds for an archive that is rarely written.
# Time-partitioned queues are not affected (infinite_time_partitions).
#
# This test asserts the hazard as observed with 4.7.2 and that the documented
# workaround (premaking from the queue's sequence) repairs it. If pgmq or
# pg_partman learns to premake from the sequence, the "hazard" checks fail:
# then turn them around. Takes about 25 seconds.
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
say "workaround: premake from the sequence"
# The archive's spilled row first (the guide's recovery), then partitions
# ahead of the queue's sequence for the queue and the archive.
sql "CALL partman.partition_data_proc('pgmq.a_drained')" 2>/dev/null
premake=$(doc_example premake-from-sequence)
sql "$premake"
check "'drained' and its archive have partitions to id 69 (last id 40, premake 2)" \
  "SELECT bool_and(premade_until = '69' AND runway_messages = 29) FROM pgmq.partition_status('drained')"
check "'backlog' untouched where partman had premade already" \
  "SELECT premade_until::bigint >= 59 FROM pgmq.partition_status('backlog') WHERE parent_table = 'pgmq.q_backlog'"
sql "SELECT pgmq.send_batch('drained', array_fill('{}'::jsonb, ARRAY[10]))" >/dev/null
sql "SELECT pgmq.archive('drained', 50::bigint)" >/dev/null
check "new messages and archives go to real partitions again" \
  "SELECT (SELECT count(*) FROM pgmq.q_drained_default) + (SELECT count(*) FROM pgmq.a_drained_default) = 0
      AND (SELECT count(*) FROM pgmq.q_drained) = 9 AND (SELECT count(*) FROM pgmq.a_drained) = 2"
maintain
say "ok: run_maintenance() succeeds"
