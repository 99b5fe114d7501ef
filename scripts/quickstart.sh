#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), builds and installs pgmq, starts
# a PostgreSQL 15 cluster that stays running, and runs the README's quick start.
set -euo pipefail
# shellcheck source=scripts/lib/cluster.sh
. "$(dirname "$0")/lib/cluster.sh"
# shellcheck source=scripts/lib/quickstart_demo.sh
. "$(dirname "$0")/lib/quickstart_demo.sh"

dir=/var/tmp/pgmq-quickstart
port=5498

ensure_packages
build_and_install
# A cluster left running by an earlier run still has the old library loaded
# (preloaded libraries are only read at server start): restart it.
PGMQ_CLUSTER_DIR=$dir stop_cluster
start_cluster "$dir" "$port"

quickstart_demo postgres

cat <<EOF
The quick start cluster keeps running (data $dir/data, log $dir/server.log).
Connect:  psql -h $dir/socket -p $port -U postgres postgres
          or, from a program: postgresql://postgres@/postgres?host=$dir/socket&port=$port
Next:     docs/getting-started.md, which goes on in this database.
Stop:     runuser -u postgres -- $PG_BIN/pg_ctl -D $dir/data stop
EOF
