#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), builds and installs pgmq, starts
# a PostgreSQL 15 cluster that stays running, and runs the README's quick start.
set -euo pipefail
# shellcheck source=scripts/lib/cluster.sh
. "$(dirname "$0")/lib/cluster.sh"

dir=/var/tmp/pgmq-quickstart
port=5498

ensure_packages
build_and_install
# A cluster left running by an earlier run still has the old library loaded
# (preloaded libraries are only read at server start): restart it.
PGMQ_CLUSTER_DIR=$dir stop_cluster
start_cluster "$dir" "$port"

psql=(psql -X -v ON_ERROR_STOP=1 -d postgres)
"${psql[@]}" -q <<'SQL'
-- Quiet "already exists, skipping" notices on a second run.
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
CREATE EXTENSION IF NOT EXISTS pgmq;
-- Start from no queue, so that every run prints the same ids.
SELECT pgmq.drop_queue(queue_name) FROM pgmq.list_queues() WHERE queue_name = 'jobs' \g /dev/null
SQL

# -e prints each statement above its result, as if typed into psql.
"${psql[@]}" -e -c "SELECT pgmq.create('jobs');"
sent=$("${psql[@]}" -e -c "SELECT * FROM pgmq.send('jobs', '{\"task\": \"resize\", \"image_id\": 42}');")
printf '%s\n\n' "$sent"  # $(...) dropped the blank line psql ends with
id=$(awk '/^ *[0-9]+ *$/ { print $1; exit }' <<<"$sent")
"${psql[@]}" -e -c "SELECT msg_id, read_ct, message FROM pgmq.read('jobs', 60, 10);"
"${psql[@]}" -e -c "SELECT pgmq.delete('jobs', $id);"

cat <<EOF
The quick start cluster keeps running (data $dir/data, log $dir/server.log).
Connect:  psql -h $dir/socket -p $port -U postgres postgres
Stop:     runuser -u postgres -- $PG_BIN/pg_ctl -D $dir/data stop
EOF
