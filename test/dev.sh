#!/usr/bin/env bash
# test/dev.sh: the edit-test loop against a private PostgreSQL 15 installation,
# so it never replaces the system's pgmq (which test/run installs and uses).
#
#   bash test/dev.sh PORT                 build, install privately, (re)start the cluster
#   bash test/dev.sh PORT CMD ARGS...     the same, then CMD with PGHOST/PGPORT/PGUSER set
#   e.g. bash test/dev.sh 5601 make -f Makefile.pgxs installcheck ISOLATION=
#        bash test/dev.sh 5601 make -f Makefile.pgxs installcheck REGRESS=
#        bash test/dev.sh 5601 /usr/bin/python3 test/integration/bad_input_sweep.py
#
# State lives in /tmp/pgmq-dev-PORT (install/ and cluster/); one per port, so
# several checkouts (git worktrees) can each have their own. The cluster is
# restarted after each build so it loads the new pgmq.so. Needs root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/cluster.sh"
. "$repo/test/lib/private_install.sh"

port=${1:?usage: test/dev.sh PORT [CMD ARGS...]}
shift
state=/tmp/pgmq-dev-$port
install_root=$state/install
mkdir -p "$state"
chmod 755 "$state"

if [ ! -x "$install_root/usr/lib/postgresql/$PG_MAJOR/bin/postgres" ]; then
  make_private_install "$install_root" >/dev/null
fi
DESTDIR=$install_root "$repo/docker/build.sh" >"$state/build.log" 2>&1 || { tail -n 40 "$state/build.log"; exit 1; }
chmod -R a+rX "$install_root"

PG_BIN=$install_root/usr/lib/postgresql/$PG_MAJOR/bin
# A cluster left by another checkout includes that checkout's configuration.
conf=$state/cluster/data/postgresql.conf
if [ -f "$conf" ] && ! grep -qF "include '$repo/docker/postgresql.conf'" "$conf"; then
  as_postgres "$PG_BIN/pg_ctl" -D "$state/cluster/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$state/cluster"
fi
if [ -f "$state/cluster/data/postmaster.pid" ]; then
  as_postgres "$PG_BIN/pg_ctl" -D "$state/cluster/data" -m fast -w stop >/dev/null 2>&1 || true
fi
start_cluster "$state/cluster" "$port"
echo "server: $state/cluster/server.log, psql -h $PGHOST -p $PGPORT -U postgres"
[ $# -eq 0 ] && exit 0
cd "$repo"
exec "$@"
