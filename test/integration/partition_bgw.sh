#!/usr/bin/env bash
# test/integration/partition_bgw.sh: pg_partman's background worker
# (pg_partman_bgw, preloaded by docker/postgresql.conf) maintains partitioned
# queues. Pointed at this test's database with a 1-second interval:
#  - msg_id partitions: it creates partitions ahead as messages arrive; the
#    runway of partition_status falls with every send and rises after each
#    maintenance run, so a steady stream never reaches the default partition;
#  - retention (msg_id): partitions whose ids are all more than
#    retention_interval below the newest id are dropped, in the queue (unread
#    messages with them) and in the archive (archived messages with them;
#    counted from the archive's own newest id);
#  - time partitions: partitions are premade ahead of the clock, and retention
#    drops queue and archive partitions older than retention_interval.
# See docs/partitioned-queues.md. Takes about 30 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

part_setup pgmq_it_bgw

# ---------------------------------------------------------------------------
say "msg_id partitions: the worker keeps the runway ahead of a stream"
sql "SELECT pgmq.create_partitioned('bgw_ids', '10', '30', 2)"
check "fresh queue: partitions for ids 0-29, runway 29" \
  "SELECT bool_and(premade_until = '29' AND runway_messages = 29) FROM pgmq.partition_status('bgw_ids')"
# Ids 1-8 are archived at once: the archive's oldest rows, for retention below.
sql "SELECT pgmq.send_batch('bgw_ids', array_fill('{\"early\": true}'::jsonb, ARRAY[8]))" >/dev/null
sql "SELECT pgmq.archive('bgw_ids', ARRAY[1,2,3,4,5,6,7,8]::bigint[])" >/dev/null
before=$(runway bgw_ids q)
sql "SELECT pgmq.send_batch('bgw_ids', array_fill('{}'::jsonb, ARRAY[17]))" >/dev/null
after=$(runway bgw_ids q)
[ "$after" -eq $((before - 17)) ] || fail "runway fell from $before by 17 sends to $after"
say "ok: runway falls with sends ($before -> $after, ids up to 25)"
# The archive is premade from its own newest id: archive as the stream goes,
# or an archived id far beyond the archive's newest lands in its default.
sql "SELECT pgmq.archive('bgw_ids', 25::bigint)" >/dev/null

bgw_on 1
# Maintenance sees max(msg_id) 25 in p20 and premakes p30 and p40, for the
# queue and for the archive.
wait_for "the worker premade partitions ahead (premade_until 49)" 20 \
  "SELECT bool_and(premade_until::bigint >= 49) FROM pgmq.partition_status('bgw_ids')"
raised=$(runway bgw_ids q)
[ "$raised" -gt "$after" ] || fail "runway did not rise after maintenance ($after -> $raised)"
say "ok: runway rises after maintenance ($after -> $raised)"

# A stream of 5 bursts of 20 (each below the runway of 24-29), the last
# message of each archived: the worker catches up between bursts and nothing
# reaches a default partition.
for round in 1 2 3 4 5; do
  sql "SELECT pgmq.send_batch('bgw_ids', array_fill('{}'::jsonb, ARRAY[20]))" >/dev/null
  top=$(sql "SELECT last_value FROM pgmq.q_bgw_ids_msg_id_seq")
  sql "SELECT pgmq.archive('bgw_ids', $top::bigint)" >/dev/null
  low=$(runway bgw_ids q)
  wait_for "burst $round (ids up to $top, runway $low): runway back above 20" 20 \
    "SELECT bool_and(runway_messages > 20) FROM pgmq.partition_status('bgw_ids')"
done
check "no message in the default partitions" \
  "SELECT (SELECT count(*) FROM pgmq.q_bgw_ids_default) + (SELECT count(*) FROM pgmq.a_bgw_ids_default) = 0"

# ---------------------------------------------------------------------------
say "retention (msg_id): partitions more than 30 ids below the newest are dropped"
# The newest id is 125; partitions whose ids all lie more than 30 below it
# (p0 to p80) go. They held unread messages: retention deletes messages
# whether or not they were read.
wait_for "queue partitions below id 90 dropped" 20 \
  "SELECT min(msg_id) >= 90 FROM pgmq.q_bgw_ids"
check "the queue's oldest partition now starts at 90" \
  "SELECT min(substring(partition_tablename FROM '_p(\\d+)$')::int) = 90
     FROM partman.show_partitions('pgmq.q_bgw_ids')"
# The archive's retention counts from the archive's newest id (125 too).
wait_for "archived messages below 90 dropped by archive retention" 20 \
  "SELECT array_agg(msg_id ORDER BY msg_id) = '{105,125}' FROM pgmq.a_bgw_ids"
check "archive's oldest partition starts at 90" \
  "SELECT min(substring(partition_tablename FROM '_p(\\d+)$')::int) = 90
     FROM partman.show_partitions('pgmq.a_bgw_ids')"

# ---------------------------------------------------------------------------
say "time partitions: premade ahead of the clock, dropped after retention"
# 2-second partitions, 3 premade, kept for 4 seconds.
sql "SELECT pgmq.create_partitioned('bgw_time', '2 seconds', '4 seconds', 3)"
check "runway_time is set, runway_messages is not" \
  "SELECT bool_and(runway_time > interval '0' AND runway_messages IS NULL) FROM pgmq.partition_status('bgw_time')"
first_end=$(premade_until bgw_time q)
t1=$(sql "SELECT pgmq.send('bgw_time', '{\"old\": true}')")
sql "SELECT pgmq.send('bgw_time', '{\"keep\": true}')" >/dev/null
sql "SELECT pgmq.archive('bgw_time', $t1::bigint)" >/dev/null
# Unmaintained, 3 premade 2-second partitions last at most 8 seconds.
sleep 9
check "partitions premade ahead of the clock after 9 s (first premade end $first_end)" \
  "SELECT bool_and(premade_until::timestamptz > now() + interval '3 seconds'
                   AND runway_time > interval '3 seconds') FROM pgmq.partition_status('bgw_time')"
# Keep one message fresh by sending another: the queue table has rows in a
# recent partition, the first messages' partitions age out.
fresh=$(sql "SELECT pgmq.send('bgw_time', '{\"fresh\": true}')")
wait_for "retention dropped the queue partition of the unread old message" 20 \
  "SELECT NOT EXISTS (SELECT 1 FROM pgmq.q_bgw_time WHERE message ? 'keep')"
wait_for "retention dropped the archive partition of the archived message" 20 \
  "SELECT count(*) = 0 FROM pgmq.a_bgw_time"
check "the fresh message is still there" \
  "SELECT array_agg(msg_id) = '{$fresh}' FROM pgmq.q_bgw_time"
check "nothing in the default partitions" \
  "SELECT (SELECT count(*) FROM pgmq.q_bgw_time_default) + (SELECT count(*) FROM pgmq.a_bgw_time_default) = 0"
