#!/usr/bin/env bash
# test/integration/partition_overrun.sh: a burst larger than the runway of a
# msg_id-partitioned queue, with no maintenance running, and the guide's
# recovery. Checks, against the real pg_partman 4.x and its worker:
#  - the spilled messages land in the default partition; send, read, archive
#    and delete keep working; default_partition_length > 0 after ANALYZE;
#  - run_maintenance for that queue fails, and so does run_maintenance()
#    without argument, the call the background worker makes: a second
#    partitioned queue loses its maintenance too;
#  - the paths docs/partitioned-queues.md recommends keep the second queue
#    maintained: automatic_maintenance = 'off' for the overrun tables (the
#    worker carries on with the rest), and a per-table maintenance procedure;
#  - the three recovery statements, outside a transaction block, for the queue
#    (with a producer still sending) and for the archive: afterwards the
#    default partitions are empty, maintenance succeeds, every message is
#    there once with its msg_id, payload and other columns unchanged, and the
#    next send gets a fresh id in a real partition.
# Prints how long the recovery took. Sizes (environment):
#   PGMQ_OVERRUN_SPILL     messages past the runway (default 3000)
#   PGMQ_OVERRUN_INTERVAL  partition_interval (default 1000)
#   PGMQ_OVERRUN_PREMAKE   premake (default 4)
# The measurement in docs/partitioned-queues.md used SPILL=100000 INTERVAL=10000
# PREMAKE=4 (create_partitioned's defaults). Defaults take about 30 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

SPILL=${PGMQ_OVERRUN_SPILL:-3000}
INTERVAL=${PGMQ_OVERRUN_INTERVAL:-1000}
PREMAKE=${PGMQ_OVERRUN_PREMAKE:-4}
RUNWAY=$(((PREMAKE + 1) * INTERVAL - 1)) # ids 1 .. (premake + 1) * interval - 1
BURST=$((RUNWAY + SPILL))

# ms: milliseconds since the epoch, for timings.
ms() { date +%s%3N; }

part_setup pgmq_it_overrun
# Retention far away: nothing may be dropped while the test counts messages.
sql "SELECT pgmq.create_partitioned('burst', '$INTERVAL', '$((INTERVAL * 1000))', $PREMAKE)" >/dev/null
sql "SELECT pgmq.create_partitioned('other', '100', '100000', 2)" >/dev/null
check "runway of the fresh queue is $RUNWAY" \
  "SELECT bool_and(runway_messages = $RUNWAY) FROM pgmq.partition_status('burst')"

# ---------------------------------------------------------------------------
say "burst of $BURST messages (runway $RUNWAY), no maintenance running"
t0=$(ms)
# Payload {"i": n} with n = the msg_id it gets (a fresh queue counts from 1).
sql "DO \$\$
     BEGIN
       FOR b IN 0 .. ($BURST - 1) / 10000 LOOP
         PERFORM pgmq.send_batch('burst', ARRAY(
           SELECT jsonb_build_object('i', g)
             FROM generate_series(b * 10000 + 1, least((b + 1) * 10000, $BURST)) g ORDER BY g));
       END LOOP;
     END \$\$"
say "sent in $(($(ms) - t0)) ms"
check "msg_id = i for every message" "SELECT bool_and(msg_id = (message->>'i')::bigint) FROM pgmq.q_burst"
check "$SPILL messages in the default partition" "SELECT count(*) = $SPILL FROM pgmq.q_burst_default"
check "runway is 0" \
  "SELECT runway_messages = 0 FROM pgmq.partition_status('burst') WHERE parent_table = 'pgmq.q_burst'"

# Sends, reads, archives and deletes keep working, spilled messages included.
check "a send after the overrun succeeds (id $((BURST + 1)))" \
  "SELECT id = $((BURST + 1)) FROM pgmq.send('burst', '{\"i\": $((BURST + 1))}') AS id"
check "it is in the default partition" \
  "SELECT EXISTS (SELECT 1 FROM pgmq.q_burst_default WHERE msg_id = $((BURST + 1)))"
check "read returns the oldest messages" \
  "SELECT array_agg(msg_id ORDER BY msg_id) = '{1,2,3}' FROM pgmq.read('burst', 30, 3)"
check "conditional read finds a spilled message" \
  "SELECT array_agg(msg_id) = '{$BURST}' FROM pgmq.read('burst', 30, 1, '{\"i\": $BURST}')"
check "pop of the oldest visible message" "SELECT msg_id = 4 FROM pgmq.pop('burst')"
check "delete of a spilled message" "SELECT pgmq.delete('burst', $((RUNWAY + 1))::bigint)"
# Messages 1-3 archived: in the archive's first partition. (While all of the
# archive's partitions are empty, pg_partman 4.7.2 ignores its default
# partition: maintenance of the archive neither fails nor premakes.)
check "archive of messages 1-3" "SELECT count(*) = 3 FROM pgmq.archive('burst', ARRAY[1, 2, 3]::bigint[])"
# Ten spilled messages archived: they land in the archive's default partition.
check "archive of 10 spilled messages" \
  "SELECT count(*) = 10 FROM pgmq.archive('burst', ARRAY(SELECT generate_series($((RUNWAY + 2)), $((RUNWAY + 11))))::bigint[])"
check "they are in the archive's default partition" "SELECT count(*) = 10 FROM pgmq.a_burst_default"
in_q_default=$(sql "SELECT count(*) FROM pgmq.q_burst_default")
in_a_default=$(sql "SELECT count(*) FROM pgmq.a_burst_default")

# An estimate: 0 until autovacuum or ANALYZE has visited the default partitions.
say "default_partition_length before ANALYZE: $(sql "SELECT default_partition_length FROM pgmq.metrics('burst')")"
sql "ANALYZE pgmq.q_burst_default, pgmq.a_burst_default"
estimate=$(sql "SELECT default_partition_length FROM pgmq.metrics('burst')")
[ "$estimate" -gt 0 ] || fail "default_partition_length after ANALYZE is $estimate"
say "ok: default_partition_length after ANALYZE: $estimate (rows: $in_q_default in q_burst_default, $in_a_default in a_burst_default)"
# The runway alert of the docs, for 100 messages a minute rather than 10,000
# (other's runway of 299 is healthy at that rate).
alert=$(doc_example runway-alert)
alert=${alert//'2 * 10000'/'2 * 100'}
flagged=$(sql "WITH alert AS (${alert%;}
) SELECT string_agg(DISTINCT queue_name, ',') FROM alert")
[ "$flagged" = burst ] || fail "the runway alert of docs/partitioned-queues.md flagged '$flagged', expected burst"
say "ok: the documented runway alert flags burst, not other"

# ---------------------------------------------------------------------------
say "maintenance fails for the overrun queue, and for the whole database"
expect_error "run_maintenance('pgmq.q_burst') fails" \
  'updated partition constraint for default partition "q_burst_default" would be violated' \
  "SELECT partman.run_maintenance('pgmq.q_burst')"
expect_error "run_maintenance('pgmq.a_burst') fails" \
  'updated partition constraint for default partition "a_burst_default" would be violated' \
  "SELECT partman.run_maintenance('pgmq.a_burst')"
expect_error "run_maintenance() for all tables fails" \
  'updated partition constraint for default partition "[qa]_burst_default" would be violated' \
  "SELECT partman.run_maintenance()"

# The healthy queue needs maintenance: 250 of its 299 ids used.
sql "SELECT pgmq.send_batch('other', array_fill('{}'::jsonb, ARRAY[250]))" >/dev/null
sql "SELECT pgmq.archive('other', 250::bigint)" >/dev/null
other_until=$(premade_until other q)
[ "$other_until" = 299 ] || fail "other: premade_until is $other_until, expected 299"

# The plain background worker, every second: it calls run_maintenance() for
# the database, which fails every time, so 'other' gets nothing.
bgw_on 1
sleep 6
[ "$(premade_until other q)" = 299 ] || fail "other got partitions although run_maintenance() fails"
say "ok: with one queue overrun, the background worker maintains no queue (other: premade_until still 299 after 6 s)"

# Path 1: take the overrun tables out of automatic maintenance. The worker's
# run_maintenance() then skips them and maintains everything else.
pause=$(doc_example pause-maintenance)
sql "${pause//orders/burst}"
wait_for "automatic_maintenance = 'off' for burst: the worker premakes for other again" 20 \
  "SELECT bool_and(premade_until::bigint >= 499) FROM pgmq.partition_status('other')"
sql "UPDATE partman.part_config SET automatic_maintenance = 'on'
      WHERE parent_table IN ('pgmq.q_burst', 'pgmq.a_burst')"
bgw_off

# Path 2: maintenance table by table, each failure isolated: the procedure
# of docs/partitioned-queues.md, created and called.
sql "SELECT pgmq.send_batch('other', array_fill('{}'::jsonb, ARRAY[230]))" >/dev/null
sql "SELECT pgmq.archive('other', 480::bigint)" >/dev/null
before_each=$(premade_until other q)
each=$(doc_example run-maintenance-each)
warnings=$(sql "$each" 2>&1)
grep -q 'maintenance of pgmq.q_burst failed: updated partition constraint' <<<"$warnings" ||
  fail "run_maintenance_each did not report q_burst: $warnings"
grep -q 'maintenance of pgmq.a_burst failed' <<<"$warnings" || fail "run_maintenance_each did not report a_burst"
check "run_maintenance_each premade partitions for other (was $before_each)" \
  "SELECT bool_and(premade_until::bigint >= 699) FROM pgmq.partition_status('other')"

# ---------------------------------------------------------------------------
say "recovery of the queue (${in_q_default} rows in its default), a producer still sending"
sql "CREATE TABLE public.before_q AS SELECT * FROM pgmq.q_burst"
sql "CREATE TABLE public.before_a AS SELECT * FROM pgmq.a_burst"
# The producer: 200 sends, one every 10 ms, each committed.
psql -X -q -v ON_ERROR_STOP=1 -d "$PART_DB" -c "DO \$\$
     BEGIN
       FOR n IN 1 .. 200 LOOP
         PERFORM pgmq.send('burst', jsonb_build_object('late', n));
         COMMIT;
         PERFORM pg_sleep(0.01);
       END LOOP;
     END \$\$" &
producer=$!
# recover STATEMENTS: the three statements of docs/partitioned-queues.md, one by
# one, each timed; a failure of run_maintenance fails the test.
recover() {
  local statement t out times='' total=0
  while IFS= read -r statement; do
    [ -n "$statement" ] || continue
    t=$(ms)
    if [[ $statement == *run_maintenance* ]]; then
      maintain "$(sed -E "s/.*run_maintenance\('([^']+)'\).*/\1/" <<<"$statement")"
    else
      out=$(sql "$statement" 2>&1) || fail "$statement: $out"
    fi
    t=$(($(ms) - t))
    total=$((total + t))
    times+="$(grep -oE 'partition_data_proc|run_maintenance|ANALYZE' <<<"$statement") $t ms, "
  done <<<"$1"
  say "${times}total $total ms"
}
recover_queue=$(doc_example recover-queue)
recover_queue=${recover_queue//orders/burst}
recover "$recover_queue"
wait "$producer" || fail "the producer failed during recovery"
# Sends that landed in the default after the last batch moved: the same
# statements again, as the docs say.
rounds=1
while [ "$(sql "SELECT count(*) FROM pgmq.q_burst_default")" != 0 ]; do
  [ $rounds -lt 3 ] || fail "the queue's default partition is still not empty after $rounds recoveries"
  say "late sends in the default partition: recovering again"
  recover "$recover_queue"
  rounds=$((rounds + 1))
done

say "recovery of the archive (${in_a_default} rows in its default)"
recover_archive=$(doc_example recover-archive)
recover "${recover_archive//orders/burst}"

check "default_partition_length is 0 again" "SELECT default_partition_length = 0 FROM pgmq.metrics('burst')"
check "the default partitions are empty" \
  "SELECT (SELECT count(*) FROM pgmq.q_burst_default) + (SELECT count(*) FROM pgmq.a_burst_default) = 0"
check "the queue has runway again" \
  "SELECT runway_messages > 0 AND default_partition_rows = 0
     FROM pgmq.partition_status('burst') WHERE parent_table = 'pgmq.q_burst'"
# The archive's partitions are premade from the archive's own newest id, which
# may lie far behind the queue's: then partition_status rightly shows no
# runway for it (see docs/partitioned-queues.md, "Queues that drain").
say "archive after recovery: $(sql "SELECT format('premade_until %s, runway %s', premade_until, runway_messages)
  FROM pgmq.partition_status('burst') WHERE parent_table = 'pgmq.a_burst'")"
maintain pgmq.q_burst
maintain pgmq.a_burst
maintain
say "ok: run_maintenance succeeds again, per table and for the database"

# Every message exactly once, with all its columns as before the recovery.
check "no msg_id twice in the queue" "SELECT count(*) = count(DISTINCT msg_id) FROM pgmq.q_burst"
check "queue rows unchanged (msg_id, payload, vt, read_ct, timestamps)" \
  "SELECT NOT EXISTS (SELECT * FROM public.before_q EXCEPT SELECT * FROM pgmq.q_burst)"
check "the producer's 200 late messages are there once each" \
  "SELECT count(*) = 200 AND count(DISTINCT message->>'late') = 200 FROM pgmq.q_burst WHERE message ? 'late'"
check "queue holds exactly the old rows and the late ones" \
  "SELECT (SELECT count(*) FROM pgmq.q_burst) = (SELECT count(*) FROM public.before_q) + 200"
check "archive rows unchanged" \
  "SELECT NOT EXISTS (SELECT * FROM public.before_a EXCEPT SELECT * FROM pgmq.a_burst)
      AND (SELECT count(*) FROM pgmq.a_burst) = (SELECT count(*) FROM public.before_a)"
check "ids 1..$((BURST + 1)) are each in the queue or the archive once, but for the popped and deleted" \
  "SELECT array_agg(g ORDER BY g) = ARRAY[4, $((RUNWAY + 1))]::bigint[]
     FROM generate_series(1::bigint, $((BURST + 1))) g
    WHERE (SELECT count(*) FROM pgmq.q_burst WHERE msg_id = g) + (SELECT count(*) FROM pgmq.a_burst WHERE msg_id = g) <> 1"
check "every moved row is in the partition of its msg_id" \
  "SELECT bool_and(c.relname = 'q_burst_p' || (q.msg_id / $INTERVAL * $INTERVAL))
     FROM pgmq.q_burst q JOIN pg_class c ON c.oid = q.tableoid"

next=$(sql "SELECT last_value + 1 FROM pgmq.q_burst_msg_id_seq")
check "the next send gets id $next" \
  "SELECT id = $next FROM pgmq.send('burst', '{\"after\": true}') AS id"
check "in a real partition, colliding with nothing" \
  "SELECT count(*) = 1 AND bool_and(tableoid = 'pgmq.q_burst_p$((next / INTERVAL * INTERVAL))'::regclass)
     FROM pgmq.q_burst WHERE msg_id = $next"
