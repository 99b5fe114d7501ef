#!/bin/bash
# docker/healthcheck.sh: the image's HEALTHCHECK. Healthy (exit 0) when the
# server accepts connections and pgmq is installed in database postgres,
# which is true only once the first-start initialization has finished (it
# runs on a private socket this check cannot reach). The connection comes
# from the environment; inside the image the defaults (local socket in
# /var/run/postgresql, port 5432, user postgres) apply.
set -euo pipefail
installed=$(psql -X -w -d postgres -tA -c "SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'pgmq'")
[ "$installed" = 1 ]
