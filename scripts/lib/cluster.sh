# shellcheck shell=bash
# Sourced by scripts/quickstart.sh and test/run: packages, build, and a local
# PostgreSQL cluster on a private unix socket. Needs bash and root.
# PG_MAJOR picks the PostgreSQL major (default 15, Debian 12's); another one
# must be packaged by the system this runs on (see test/lib/rootfs.sh).

export PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PGMQ_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PGMQ_PACKAGES=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-$PG_MAJOR-partman
  nlohmann-json3-dev libgtest-dev cmake g++ make python3-psycopg)
# pgmq-relay (CMake target) and its test's broker and consumer: host only. The
# other majors' root filesystems run the server suites, not the relay's test
# (test/run's HOST_ONLY_TESTS), and need not carry an Erlang runtime.
[ -n "${PGMQ_IN_ROOTFS:-}" ] || PGMQ_PACKAGES+=(libpq-dev librabbitmq-dev libssl-dev libcpp-httplib-dev pkg-config rabbitmq-server python3-pika openssl)
# pgmq-console's browser test (host only, like the relay's): Chromium, driven
# from Node.js, which the JavaScript client's test (client_libraries.sh) uses
# too; a machine that has its own Node.js keeps it. And the connection pooler
# of pgbouncer.py (host only: what passes through a pooler does not change
# with the major). Only for test/run (PGMQ_BROWSER_TEST=1): the quick start
# needs neither a browser nor a pooler.
if [ -z "${PGMQ_IN_ROOTFS:-}" ] && [ -n "${PGMQ_BROWSER_TEST:-}" ]; then
  PGMQ_PACKAGES+=(chromium pgbouncer)
  command -v npm >/dev/null 2>&1 || PGMQ_PACKAGES+=(nodejs npm)
fi

# Install only what is missing, so a prepared machine needs no network.
ensure_packages() {
  local missing=() p
  for p in "${PGMQ_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  apt-get update &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# docker/build.sh is the one build script: the Docker image's build stage runs
# it too. It builds with warnings as errors, so what builds locally builds in
# CI, and stops at the first failure (set -e) even where callers run this
# without set -e (if !).
build_and_install() {
  "$PGMQ_REPO/docker/build.sh"
}

# The server refuses to run as root; cd / because postgres may not be allowed
# into the caller's working directory.
as_postgres() {
  (cd / && runuser -u postgres -- "$@")
}

# start_cluster DIR [PORT]: DIR holds data/, socket/ and server.log. Creates
# the cluster on first use, starts it unless it is already running, and points
# libpq (PGHOST/PGPORT/PGUSER) at it.
start_cluster() {
  PGMQ_CLUSTER_DIR=$1
  local port=${2:-5499}
  local data=$1/data sock=$1/socket log=$1/server.log
  mkdir -p "$data" "$sock"
  chown postgres:postgres "$1" "$data" "$sock"
  chmod 700 "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    # C locale: sort order in test output must not depend on the machine.
    as_postgres "$PG_BIN/initdb" --auth=trust -U postgres --encoding=UTF8 \
      --locale=C -D "$data" >"$1/initdb.log" 2>&1 || { cat "$1/initdb.log"; return 1; }
    # The image's configuration first, then only where this cluster listens:
    # no TCP, a socket directory of its own.
    cat >>"$data/postgresql.conf" <<EOF || return 1

include '$PGMQ_REPO/docker/postgresql.conf'
include '$PGMQ_REPO/test/lib/test-cluster.conf'
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
EOF
  fi
  # The server reads the included file itself, as postgres, at every start.
  if ! as_postgres test -r "$PGMQ_REPO/docker/postgresql.conf"; then
    echo "User postgres cannot read $PGMQ_REPO/docker/postgresql.conf;" \
      "put the repository where postgres can read it." >&2
    return 1
  fi
  export PGHOST=$sock PGPORT=$port PGUSER=postgres
  as_postgres "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1 && return 0
  touch "$log" && chown postgres:postgres "$log"
  if ! as_postgres "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null; then
    echo "PostgreSQL failed to start; server log $log:" >&2
    cat "$log" >&2
    return 1
  fi
}

# Restarts the cluster of the last start_cluster: background workers start
# afresh (pg_partman's master stays away for 10 minutes after it failed to
# start a worker, for instance for a database a test had just dropped).
restart_cluster() {
  as_postgres "$PG_BIN/pg_ctl" -D "$PGMQ_CLUSTER_DIR/data" -l "$PGMQ_CLUSTER_DIR/server.log" -m fast -w -t 60 \
    restart >/dev/null
}

# Stops the cluster of the last start_cluster; safe to call more than once.
stop_cluster() {
  [ -n "${PGMQ_CLUSTER_DIR:-}" ] || return 0
  as_postgres "$PG_BIN/pg_ctl" -D "$PGMQ_CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
}
