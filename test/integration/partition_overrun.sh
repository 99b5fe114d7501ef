#!/usr/bin/env bash
# test/integration/partition_overrun.sh: a burst larger than the runway of a
# msg_id-partitioned queue (and a time-partitioned queue left without
# maintenance), then the maintenance paths and the recovery of
# docs/partitioned-queues.md. Checks, against the real pg_partman (4.x or
# 5.x) and the real background workers:
#  - the spilled messages land in the default partition; send, read, archive
#    and delete keep working; default_partition_length > 0 after ANALYZE;
#  - pg_partman's run_maintenance fails for the overrun tables, and so does
#    run_maintenance() without argument, the call pg_partman's worker makes:
#    a second partitioned queue gets nothing from that worker;
#  - what keeps the second queue maintained: taking the overrun tables out of
#    automatic maintenance (pg_partman's worker carries on with the rest);
#    CALL pgmq.run_partition_maintenance() (a WARNING naming each failing
#    queue, the others maintained, and the id-partitioned overrun contained:
#    new messages go to real partitions again); pgmq's background worker,
#    while one queue's maintenance keeps failing on every run;
#  - CALL pgmq.recover_partitioned_queue for the queue and its archive, with a
#    producer sending all along, and for the time-partitioned queue: the
#    default partitions are empty and default_partition_length is 0 at once,
#    maintenance succeeds again, every message is there once with its msg_id
#    and all other columns unchanged, no send failed, the next send gets a
#    fresh id in a real partition; a second call is harmless; inside a
#    transaction block it is refused.
# Prints how long the recovery took. Sizes (environment):
#   PGMQ_OVERRUN_SPILL     messages past the runway (default 3000)
#   PGMQ_OVERRUN_INTERVAL  partition_interval (default 1000)
#   PGMQ_OVERRUN_PREMAKE   premake (default 4)
# The measurements in docs/partitioned-queues.md used SPILL=100000
# INTERVAL=10000 PREMAKE=4 (create_partitioned's defaults). Defaults take
# about 40 seconds.
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

# start_producer QUEUE N DELAY: N sends of {"late": n} to QUEUE in the
# background, each committed, DELAY seconds apart; its pid in $producer. Any
# failed send fails it.
start_producer() {
  psql -X -q -v ON_ERROR_STOP=1 -d "$PART_DB" -c "DO \$\$
     BEGIN
       FOR n IN 1 .. $2 LOOP
         PERFORM pgmq.send('$1', jsonb_build_object('late', n));
         COMMIT;
         PERFORM pg_sleep($3);
       END LOOP;
     END \$\$" &
  producer=$!
}

part_setup pgmq_it_overrun
PARTMAN_MAJOR=$(sql "SELECT split_part(extversion, '.', 1) FROM pg_extension WHERE extname = 'pg_partman'")
say "pg_partman $(sql "SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'")"
# Retention far away: nothing may be dropped while the test counts messages.
sql "SELECT pgmq.create_partitioned('burst', '$INTERVAL', '$((INTERVAL * 1000))', $PREMAKE)" >/dev/null
sql "SELECT pgmq.create_partitioned('other', '100', '100000', 2)" >/dev/null
# Two-second time partitions, one premade: with no maintenance it overruns
# within seconds, and then its maintenance fails on every run.
sql "SELECT pgmq.create_partitioned('tburst', '2 seconds', '1 hour', 1)" >/dev/null
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
) SELECT string_agg(DISTINCT queue_name, ',') FROM alert WHERE queue_name <> 'tburst'")
[ "$flagged" = burst ] || fail "the runway alert of docs/partitioned-queues.md flagged '$flagged', expected burst"
say "ok: the documented runway alert flags burst, not other"

# The time-partitioned queue: once the clock has passed its premade
# partitions, a message lands in its default partition.
wait_for "the clock has passed tburst's premade partitions" 15 \
  "SELECT premade_until::timestamptz < now() - interval '0.2 seconds'
     FROM pgmq.partition_status('tburst') WHERE parent_table = 'pgmq.q_tburst'"
sql "SELECT pgmq.send('tburst', '{\"t\": 1}')" >/dev/null
check "tburst's message is in its default partition" "SELECT count(*) = 1 FROM pgmq.q_tburst_default"

# ---------------------------------------------------------------------------
say "pg_partman's maintenance fails for the overrun tables, and for the whole database"
expect_error "run_maintenance('pgmq.q_burst') fails" \
  'updated partition constraint for default partition "q_burst_default" would be violated' \
  "SELECT partman.run_maintenance('pgmq.q_burst')"
# The archive's spill lies above its newest row in a real partition. 4.x
# counts the default partition's rows when it looks for the newest id, so it
# tries to make their partition and fails; 5.x looks at real partitions only,
# has nothing to make and succeeds.
if [ "$PARTMAN_MAJOR" -ge 5 ]; then
  maintain pgmq.a_burst
  say "ok: run_maintenance('pgmq.a_burst') succeeds with pg_partman 5 (no partition to make below its spill)"
else
  expect_error "run_maintenance('pgmq.a_burst') fails" \
    'updated partition constraint for default partition "a_burst_default" would be violated' \
    "SELECT partman.run_maintenance('pgmq.a_burst')"
fi
expect_error "run_maintenance('pgmq.q_tburst') fails" \
  'updated partition constraint for default partition "q_tburst_default" would be violated' \
  "SELECT partman.run_maintenance('pgmq.q_tburst')"
expect_error "run_maintenance() for all tables fails" \
  'updated partition constraint for default partition "[qa]_t?burst_default" would be violated' \
  "SELECT partman.run_maintenance()"

# The healthy queue needs maintenance: 250 of its 299 ids used.
sql "SELECT pgmq.send_batch('other', array_fill('{}'::jsonb, ARRAY[250]))" >/dev/null
sql "SELECT pgmq.archive('other', 250::bigint)" >/dev/null
other_until=$(premade_until other q)
[ "$other_until" = 299 ] || fail "other: premade_until is $other_until, expected 299"

# pg_partman's own worker, every second: it calls run_maintenance() for the
# database, which fails every time, so 'other' gets nothing.
bgw_on 1
sleep 6
[ "$(premade_until other q)" = 299 ] || fail "other got partitions although run_maintenance() fails"
say "ok: with one queue overrun, pg_partman's worker maintains no queue (other: premade_until still 299 after 6 s)"

# Path 1: take the overrun tables out of automatic maintenance. The worker's
# run_maintenance() then skips them and maintains everything else.
pause=$(doc_example pause-maintenance)
sql "$(sed "s/'pgmq.q_orders', 'pgmq.a_orders'/'pgmq.q_burst', 'pgmq.a_burst', 'pgmq.q_tburst', 'pgmq.a_tburst'/" <<<"$pause")"
wait_for "automatic_maintenance = 'off' for the overrun tables: pg_partman's worker premakes for other again" 20 \
  "SELECT bool_and(premade_until::bigint >= 499) FROM pgmq.partition_status('other')"
sql "UPDATE partman.part_config SET automatic_maintenance = 'on'
      WHERE parent_table IN ('pgmq.q_burst', 'pgmq.a_burst', 'pgmq.q_tburst', 'pgmq.a_tburst')"
bgw_off

# Path 2: pgmq's maintenance, table by table, each failure isolated.
sql "SELECT pgmq.send_batch('other', array_fill('{}'::jsonb, ARRAY[230]))" >/dev/null
sql "SELECT pgmq.archive('other', 480::bigint)" >/dev/null
before_each=$(premade_until other q)
maintain_call=$(grep -m1 'run_partition_maintenance()' <<<"$(doc_example maintain)")
warnings=$(sql "$maintain_call" 2>&1)
grep -q 'WARNING:  pg_partman maintenance of queue "burst" failed for pgmq.q_burst: updated partition constraint' \
  <<<"$warnings" || fail "run_partition_maintenance did not report q_burst: $warnings"
if [ "$PARTMAN_MAJOR" -lt 5 ]; then
  grep -q 'maintenance of queue "burst" failed for pgmq.a_burst' <<<"$warnings" ||
    fail "run_partition_maintenance did not report a_burst: $warnings"
fi
grep -q 'maintenance of queue "tburst" failed for pgmq.q_tburst' <<<"$warnings" ||
  fail "run_partition_maintenance did not report q_tburst: $warnings"
grep -q "HINT:  Run CALL pgmq.recover_partitioned_queue('burst');" <<<"$warnings" ||
  fail "run_partition_maintenance did not hint at the recovery: $warnings"
! grep -q '"other"' <<<"$warnings" || fail "run_partition_maintenance warned about other: $warnings"
say "ok: CALL pgmq.run_partition_maintenance() warns about burst and tburst, naming them"
check "it premade partitions for other (was $before_each)" \
  "SELECT bool_and(premade_until::bigint >= 699) FROM pgmq.partition_status('other')"
# The id-partitioned overrun is contained: partitions above the spill.
check "burst has partitions above its spill again" \
  "SELECT runway_messages > 0 FROM pgmq.partition_status('burst') WHERE parent_table = 'pgmq.q_burst'"
# New messages still spill up to the end of the partition range that holds
# the newest spilled id (pg_partman cannot create that partition over the
# rows in the default), and not beyond.
head_end=$(((BURST + 1) / INTERVAL * INTERVAL + INTERVAL))
spilled_before=$(sql "SELECT count(*) FROM pgmq.q_burst_default")
sql "SELECT pgmq.send_batch('burst', array_fill('{\"contained\": true}'::jsonb, ARRAY[$INTERVAL]))" >/dev/null
check "of $INTERVAL new messages, those below $head_end spilled, the others went to real partitions" \
  "SELECT (SELECT count(*) FROM pgmq.q_burst_default) = $spilled_before + $head_end - $BURST - 2
      AND NOT EXISTS (SELECT 1 FROM pgmq.q_burst_default WHERE msg_id >= $head_end)
      AND (SELECT count(*) FROM pgmq.q_burst WHERE message ? 'contained' AND msg_id >= $head_end) > 0"
in_q_default=$(sql "SELECT count(*) FROM pgmq.q_burst_default")
maintain pgmq.q_burst
say "ok: pg_partman's run_maintenance('pgmq.q_burst') succeeds again (spill still in the default partition)"
expect_error "run_maintenance() for the database still fails, for tburst" \
  'default partition "q_tburst_default" would be violated' "SELECT partman.run_maintenance()"
warnings=$(sql "$maintain_call" 2>&1)
grep -q 'WARNING:  queue "burst" has messages in the default partition pgmq.q_burst_default' <<<"$warnings" ||
  fail "a second run_partition_maintenance did not warn about burst's spill: $warnings"
say "ok: the next run warns that burst's spill is still there"

# Path 3: pgmq's background worker, every second, while tburst's maintenance
# fails on every run.
sql "SELECT pgmq.send_batch('other', array_fill('{}'::jsonb, ARRAY[200]))" >/dev/null
sql "SELECT pgmq.archive('other', 680::bigint)" >/dev/null
before_worker=$(premade_until other q)
t0=$SECONDS
pgmq_worker_on 1
wait_for "pgmq's worker premakes for other (premade_until was $before_worker)" 20 \
  "SELECT bool_and(premade_until::bigint >= 899) FROM pgmq.partition_status('other')"
say "other got its partitions from pgmq's worker within $((SECONDS - t0)) s"
# (Waiting for pg_partman's lock first: while pgmq's worker holds it, the call
# would return at once with "Partman maintenance already running".)
expect_error "meanwhile run_maintenance('pgmq.q_tburst') still fails" \
  'default partition "q_tburst_default" would be violated' \
  "BEGIN; SELECT pg_advisory_xact_lock(hashtext('pg_partman run_maintenance'));
   SELECT partman.run_maintenance('pgmq.q_tburst'); COMMIT;"
pgmq_worker_off

# ---------------------------------------------------------------------------
say "recovery of burst ($(sql "SELECT count(*) FROM pgmq.q_burst_default") rows in its default, $in_a_default in its archive's), a producer sending all along"
sql "CREATE TABLE public.before_q AS SELECT * FROM pgmq.q_burst"
sql "CREATE TABLE public.before_a AS SELECT * FROM pgmq.a_burst"
# The producer: 200 sends, one every 10 ms, each committed. (Since pgmq's
# maintenance premade above the spill, they go to real partitions; the next
# two recoveries have producers sending into the default partition.)
start_producer burst 200 0.01
sleep 0.3
recover=$(doc_example recover)
t0=$(ms)
out=$(sql "${recover//orders/burst}" 2>&1) || fail "recover_partitioned_queue: $out"
recovery_ms=$(($(ms) - t0))
say "recover_partitioned_queue('burst') took $recovery_ms ms:"
sed 's/^/    /' <<<"$out"
wait "$producer" || fail "a send of the producer failed during the recovery"
say "ok: all 200 sends of the producer succeeded"
grep -q "pgmq.q_burst: [0-9]* messages moved out of its default partition" <<<"$out" || fail "no NOTICE for q_burst"
grep -q "pgmq.a_burst: $in_a_default messages moved out of its default partition" <<<"$out" ||
  fail "the archive's $in_a_default spilled rows were not reported moved"

check "default_partition_length is 0 at once (the call analysed the default partitions)" \
  "SELECT default_partition_length = 0 FROM pgmq.metrics('burst')"
check "the default partitions are empty" \
  "SELECT (SELECT count(*) FROM pgmq.q_burst_default) + (SELECT count(*) FROM pgmq.a_burst_default) = 0"
check "the queue has runway again" \
  "SELECT runway_messages > 0 AND default_partition_rows = 0
     FROM pgmq.partition_status('burst') WHERE parent_table = 'pgmq.q_burst'"
maintain pgmq.q_burst
maintain pgmq.a_burst
say "ok: pg_partman's run_maintenance succeeds again for q_burst and a_burst"

say "recovery of tburst (time partitions), a producer sending into its default partition all along"
# Until the recovery has created the partition of the current time, every
# send lands in the default partition: recovery must create that partition
# without making a send fail.
start_producer tburst 150 0.01
sleep 0.3
out=$(sql "CALL pgmq.recover_partitioned_queue('tburst')" 2>&1) || fail "recovery of tburst: $out"
wait "$producer" || fail "a send to tburst failed during its recovery"
say "ok: all 150 sends to tburst succeeded; $(grep -o 'pgmq.q_tburst: [0-9]* messages moved[^;]*' <<<"$out")"
check "tburst's messages are in partitions of their own, its default empty" \
  "SELECT count(*) = 151 AND count(DISTINCT msg_id) = 151
          AND bool_and(tableoid <> 'pgmq.q_tburst_default'::regclass) FROM pgmq.q_tburst"
check "tburst has runway again" \
  "SELECT runway_time > interval '0' FROM pgmq.partition_status('tburst') WHERE parent_table = 'pgmq.q_tburst'"
maintain
say "ok: run_maintenance() succeeds for the whole database again"

say "recovery of race, a producer sending into the partition range that spilled"
# 100 ids per partition, 2 premade: ids 1-299 fit, 300-350 spill. During the
# recovery new ids 351-399 still belong to the spilled range p300 (no
# partition until its rows are moved), those above to partitions the
# recovery premakes first.
sql "SELECT pgmq.create_partitioned('race', '100', '1000000', 2)" >/dev/null
sql "SELECT pgmq.send_batch('race', array_fill('{}'::jsonb, ARRAY[350]))" >/dev/null
check "51 of race's messages spilled" "SELECT count(*) = 51 FROM pgmq.q_race_default"
start_producer race 200 0.005
sleep 0.1
out=$(sql "CALL pgmq.recover_partitioned_queue('race')" 2>&1) || fail "recovery of race: $out"
wait "$producer" || fail "a send to race failed during its recovery"
say "ok: all 200 sends to race succeeded; $(grep -o 'pgmq.q_race: [0-9]* messages moved[^;]*' <<<"$out")"
check "race: 550 messages, ids 1-550 once each, none in the default partition" \
  "SELECT count(*) = 550 AND count(DISTINCT msg_id) = 550 AND min(msg_id) = 1 AND max(msg_id) = 550
          AND bool_and(tableoid <> 'pgmq.q_race_default'::regclass) FROM pgmq.q_race"
maintain pgmq.q_race

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
check "every row is in the partition of its msg_id" \
  "SELECT bool_and(c.relname = 'q_burst_p' || (q.msg_id / $INTERVAL * $INTERVAL))
     FROM pgmq.q_burst q JOIN pg_class c ON c.oid = q.tableoid"

next=$(sql "SELECT last_value + 1 FROM pgmq.q_burst_msg_id_seq")
check "the next send gets id $next" \
  "SELECT id = $next FROM pgmq.send('burst', '{\"after\": true}') AS id"
check "in a real partition, colliding with nothing" \
  "SELECT count(*) = 1 AND bool_and(tableoid = 'pgmq.q_burst_p$((next / INTERVAL * INTERVAL))'::regclass)
     FROM pgmq.q_burst WHERE msg_id = $next"

# Twice is harmless; in a transaction block it is refused.
sql "CREATE TABLE public.after_q AS SELECT * FROM pgmq.q_burst"
out=$(sql "${recover//orders/burst}" 2>&1) || fail "second recovery: $out"
grep -q "pgmq.q_burst: 0 messages moved out of its default partition in 0 batches" <<<"$out" ||
  fail "second recovery: $out"
check "a second recovery changes nothing" \
  "SELECT NOT EXISTS ((SELECT * FROM public.after_q EXCEPT SELECT * FROM pgmq.q_burst)
                      UNION ALL (SELECT * FROM pgmq.q_burst EXCEPT SELECT * FROM public.after_q))"
expect_error "recover_partitioned_queue inside a transaction block is refused" \
  'pgmq.recover_partitioned_queue\(\) cannot run inside a transaction block' \
  "BEGIN; CALL pgmq.recover_partitioned_queue('burst'); COMMIT;"
say "recovery of $in_q_default + $in_a_default spilled messages (interval $INTERVAL), with a producer: $recovery_ms ms"
