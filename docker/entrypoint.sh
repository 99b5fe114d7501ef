#!/bin/bash
# docker/entrypoint.sh: the image's entrypoint; runs as user postgres.
#
# On the first start (no cluster in $PGDATA yet) it
#   1. creates the cluster with initdb; postgresql.conf includes the
#      postgresql.conf beside this script (docker/postgresql.conf), the same
#      file test/run's cluster includes;
#   2. starts the server on a private socket only, so that no client (and no
#      health check) sees a half-initialized database;
#   3. runs init.sh: the files of init.d/ beside this script, then those of
#      /docker-entrypoint-initdb.d if one is mounted, in database postgres;
#   4. stops that server.
# Then it runs PostgreSQL in the foreground with the arguments given, so
# `docker run IMAGE -c work_mem=64MB` passes settings through.
#
# Environment:
#   PGDATA                      data directory (the image sets /var/lib/postgresql/data)
#   POSTGRES_PASSWORD           password of role postgres for TCP connections;
#                               required on first start unless
#   POSTGRES_HOST_AUTH_METHOD   is trust (development only); default scram-sha-256
#   PGPORT                      port (default 5432)
#   PG_MAJOR                    PostgreSQL major whose binaries to run (the image sets it)
#
# test/integration/docker_image.sh runs this script on the host, from a copy
# of the files laid out as the Dockerfile's COPY lines lay them out.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The image sets PG_MAJOR (its build argument); elsewhere the newest installed major.
if [ -z "${PG_MAJOR:-}" ]; then
  for bin in /usr/lib/postgresql/*/bin/postgres; do
    m=${bin#/usr/lib/postgresql/}
    m=${m%%/*}
    [[ $m =~ ^[0-9]+$ ]] && [ "$m" -gt "${PG_MAJOR:-0}" ] && PG_MAJOR=$m
  done
fi
export PATH=/usr/lib/postgresql/$PG_MAJOR/bin:$PATH

# `docker run IMAGE -c x=y` means `postgres -c x=y`; any other command runs as given.
if [ $# -eq 0 ] || [ "${1:0:1}" = - ]; then
  set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
  exec "$@"
fi
shift

: "${PGDATA:?PGDATA must name the data directory}"

initialize() {
  local auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo "entrypoint: set POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust (development only)" >&2
    exit 1
  fi

  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  local pwfile
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  local pwopt=()
  [ -n "${POSTGRES_PASSWORD:-}" ] && pwopt=(--pwfile="$pwfile")
  # Local (socket) connections are trusted: only processes inside the
  # container reach the socket. TCP connections need the password.
  initdb -D "$PGDATA" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host="$auth" "${pwopt[@]}"
  rm -f "$pwfile"
  printf '\n# Any address; the port mapping decides who can reach the server.\nhost all all all %s\n' \
    "$auth" >>"$PGDATA/pg_hba.conf"
  printf "\n# pgmq image settings (shared_preload_libraries, pg_partman_bgw.*).\ninclude '%s'\n" \
    "$here/postgresql.conf" >>"$PGDATA/postgresql.conf"

  local sock
  sock=$(mktemp -d)
  pg_ctl -D "$PGDATA" -w -t 60 -o "-c listen_addresses='' -c unix_socket_directories='$sock'" start
  if ! PGHOST=$sock PGUSER=postgres "$here/init.sh" postgres "$here/init.d" /docker-entrypoint-initdb.d; then
    pg_ctl -D "$PGDATA" -w -m fast stop || true
    echo "entrypoint: initialization failed (see above)" >&2
    exit 1
  fi
  pg_ctl -D "$PGDATA" -w -m fast stop
  rmdir "$sock"
  touch "$PGDATA/$marker"
  echo "entrypoint: initialization complete"
}

# Written last by initialize: a cluster without it was left half-initialized.
marker=pgmq-image-initialized
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  initialize
elif [ "$(cat "$PGDATA/PG_VERSION")" != "$PG_MAJOR" ]; then
  # A new image over the data of another major: the server would refuse the
  # files too, but without saying what to do.
  echo "entrypoint: $PGDATA holds a PostgreSQL $(cat "$PGDATA/PG_VERSION") cluster and this image" \
    "runs PostgreSQL $PG_MAJOR; upgrade the data with pg_upgrade, or dump and restore" \
    "(docker/README.md, \"Upgrades\"), or run the image built for PostgreSQL $(cat "$PGDATA/PG_VERSION")" >&2
  exit 1
elif [ ! -e "$PGDATA/$marker" ]; then
  echo "entrypoint: $PGDATA holds a cluster whose initialization did not finish;" \
    "remove it (for example the volume) and start again" >&2
  exit 1
fi
exec postgres -D "$PGDATA" "$@"
