#!/bin/bash
# docker/init.sh DATABASE DIR...: runs the *.sql and *.sh files of each DIR
# that exists, in name order, against DATABASE. The connection comes from the
# environment (PGHOST, PGPORT, PGUSER). *.sql files run in psql with
# ON_ERROR_STOP; *.sh files run in bash with PGDATABASE set to DATABASE. Any
# failure stops it with a non-zero status.
#
# The image's entrypoint runs it once, on the first start, as
#   init.sh postgres /opt/pgmq/init.d /docker-entrypoint-initdb.d
# and test/integration/docker_image.sh runs it on the host against a fresh
# database of the test cluster.
set -euo pipefail
shopt -s nullglob

if [ $# -lt 1 ]; then
  echo "usage: $0 DATABASE DIR..." >&2
  exit 2
fi
db=$1
shift
for dir in "$@"; do
  [ -d "$dir" ] || continue
  for file in "$dir"/*; do
    case $file in
      *.sql)
        echo "init: running $file in database $db"
        psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$file"
        ;;
      *.sh)
        echo "init: running $file for database $db"
        PGDATABASE=$db bash "$file"
        ;;
      *)
        echo "init: ignoring $file (neither .sql nor .sh)"
        ;;
    esac
  done
done
