# shellcheck shell=bash
# Sourced by scripts/quickstart.sh and test/integration/docs_examples.sh.
#
# quickstart_demo DATABASE: the quick start of README.md in DATABASE, on the
# server libpq's PG* variables point at: the extensions, then queue `jobs`
# made, sent to, read and acknowledged, each statement printed above its
# result as if typed into psql. docs/getting-started.md goes on in the same
# database, and the doc test runs it after this, so the two cannot collide
# unnoticed.
quickstart_demo() {
  local psql=(psql -X -v ON_ERROR_STOP=1 -d "$1") sent id
  "${psql[@]}" -q <<'SQL' || return 1
-- Quiet "already exists, skipping" notices on a second run.
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
CREATE EXTENSION IF NOT EXISTS pgmq;
-- Start from no queue, so that every run prints the same ids.
SELECT pgmq.drop_queue(queue_name) FROM pgmq.list_queues() WHERE queue_name = 'jobs' \g /dev/null
SQL
  "${psql[@]}" -e -c "SELECT pgmq.create('jobs');" || return 1
  sent=$("${psql[@]}" -e -c "SELECT pgmq.send('jobs', '{\"task\": \"resize\", \"image_id\": 42}');") || return 1
  printf '%s\n\n' "$sent"  # $(...) dropped the blank line psql ends with
  id=$(awk '/^ *[0-9]+ *$/ { print $1; exit }' <<<"$sent")
  "${psql[@]}" -e -c "SELECT msg_id, read_ct, message FROM pgmq.read('jobs', 30, 10);" || return 1
  "${psql[@]}" -e -c "SELECT pgmq.delete('jobs', $id);"
}
