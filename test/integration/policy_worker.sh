#!/usr/bin/env bash
# test/integration/policy_worker.sh: the pgmq maintenance worker applies the
# delivery policies (issue 14) of every queue of its database, in batches
# that each commit:
#  - retention: 2,500 messages older than max_age and 1,200 archived ones
#    older than archive_max_age are deleted (more than one batch each), the
#    young ones stay;
#  - a message a reader's open transaction holds is skipped (no wait), and
#    deleted by a later run once the reader is gone;
#  - expired deduplication ids are deleted, live ones stay;
#  - it runs each queue's work as the queue table's owner: a DELETE trigger
#    of the owner's records the owner, never the worker's superuser;
#  - partitioned queues are still maintained in the same run.
# Needs pgmq in shared_preload_libraries (docker/postgresql.conf). Takes
# about 15 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

OWNER="pgmq_it_pol_owner_$$"
part_setup pgmq_it_polw
policy_cleanup() {
  local status=$?
  set +e
  pgmq_worker_off
  sql_admin "DROP DATABASE IF EXISTS \"$PART_DB\" WITH (FORCE)"
  sql_admin "DROP ROLE IF EXISTS $OWNER"
  PART_DB=
  [ $status -eq 0 ] && say "PASS ($((SECONDS - PART_START)) s)" || say "FAILED (exit $status)"
  exit $status
}
trap policy_cleanup EXIT

[ "$(sql_admin "SHOW shared_preload_libraries" | grep -c pgmq)" = 1 ] || fail "pgmq is not preloaded: no maintenance worker"

sql_admin "CREATE ROLE $OWNER"
sql "GRANT USAGE, CREATE ON SCHEMA pgmq TO $OWNER;
     GRANT SELECT, INSERT, DELETE ON pgmq.meta TO $OWNER;
     SET ROLE $OWNER;
     SELECT pgmq.create('kept_short');
     SELECT pgmq.set_retention('kept_short', '1 hour', '1 day');
     SELECT pgmq.set_deduplication('kept_short', '1 hour');
     CREATE TABLE pgmq.deleted_by (who text);
     CREATE FUNCTION pgmq.record_deleter() RETURNS trigger LANGUAGE plpgsql AS \$\$
       BEGIN INSERT INTO pgmq.deleted_by VALUES (current_user); RETURN OLD; END \$\$;
     CREATE TRIGGER record_deleter AFTER DELETE ON pgmq.a_kept_short FOR EACH ROW EXECUTE FUNCTION pgmq.record_deleter();
     SELECT count(*) FROM pgmq.send_batch('kept_short', (SELECT array_agg(jsonb_build_object('n', i)) FROM generate_series(1, 2600) AS i));
     SELECT count(*) FROM pgmq.archive('kept_short', ARRAY(SELECT msg_id FROM pgmq.q_kept_short WHERE (message->>'n')::int <= 1300));
     UPDATE pgmq.q_kept_short SET enqueued_at = now() - interval '2 hours' WHERE (message->>'n')::int <= 2550;
     UPDATE pgmq.a_kept_short SET archived_at = now() - interval '2 days' WHERE (message->>'n')::int <= 1200;
     SELECT pgmq.send('kept_short', '{\"d\": 1}', '{\"x-pgmq-deduplication-id\": \"live\"}'::jsonb);
     SELECT pgmq.send('kept_short', '{\"d\": 2}', '{\"x-pgmq-deduplication-id\": \"old\"}'::jsonb);
     RESET ROLE;
     UPDATE pgmq.deduplication SET expires_at = now() - interval '1 s' WHERE deduplication_id = 'old';
     SELECT pgmq.create_partitioned('part_too', '100', '100000');" >/dev/null
# n = 1301..2550 are old queue messages; n = 2551..2600 and d 1, 2 are young.
say "queue: $(sql "SELECT count(*) FROM pgmq.q_kept_short") messages, archive: $(sql "SELECT count(*) FROM pgmq.a_kept_short")"

# A reader holds the oldest message in an open transaction while the worker runs.
coproc READER { psql -X -q -At -d "$PART_DB" 2>&1; }
echo "BEGIN; SELECT msg_id FROM pgmq.q_kept_short ORDER BY msg_id LIMIT 1 FOR UPDATE; SELECT 'held';" >&"${READER[1]}"
read -r -t 10 _ <&"${READER[0]}" || fail "the reader did not start"
read -r -t 10 held <&"${READER[0]}" || fail "the reader did not lock"
[ "$held" = held ] || fail "the reader: $held"

pgmq_worker_on 1
wait_for "the worker deleted the old messages but the held one" 30 \
  "SELECT count(*) = 1 FROM pgmq.q_kept_short WHERE enqueued_at < now() - interval '1 hour'"
check "young messages stay" "SELECT count(*) = 52 FROM pgmq.q_kept_short WHERE enqueued_at > now() - interval '1 hour'"
wait_for "the worker deleted the old archived messages" 30 "SELECT count(*) = 100 FROM pgmq.a_kept_short"
wait_for "the worker deleted the expired deduplication id, not the live one" 30 \
  "SELECT array_agg(deduplication_id) = '{live}' FROM pgmq.deduplication"
check "the owner's trigger ran as the owner, never as the worker's superuser" \
  "SELECT count(*) = 1200 AND bool_and(who = '$OWNER') FROM pgmq.deleted_by"
check "the partitioned queue was maintained in the same runs" \
  "SELECT count(*) > 0 FROM pgmq.partition_status('part_too') WHERE premade_until IS NOT NULL"

echo "COMMIT;" >&"${READER[1]}"
exec {READER[1]}>&-
wait "$READER_PID" 2>/dev/null || true
wait_for "once the reader is gone, a later run deletes the held message" 30 \
  "SELECT count(*) = 0 FROM pgmq.q_kept_short WHERE enqueued_at < now() - interval '1 hour'"
