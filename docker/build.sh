#!/bin/sh
# docker/build.sh: builds pgmq.so with PGXS (Makefile.pgxs) and installs it.
# This is the one build script: the Docker image's build stage runs it, and
# so do test/run and scripts/quickstart.sh on the host (through
# scripts/lib/cluster.sh), so the image ships what the tests built.
#
#   docker/build.sh                      build, install into this system
#   DESTDIR=/staging docker/build.sh     build, install under /staging
#
# Warnings are errors (WERROR=1): what builds locally builds in CI.
# PGMQ_BUILD_JOBS sets make's -j (default 2).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
make -C "$repo" -f Makefile.pgxs WERROR=1 -j"${PGMQ_BUILD_JOBS:-2}"
if [ -n "${DESTDIR:-}" ]; then
  make -C "$repo" -f Makefile.pgxs install DESTDIR="$DESTDIR"
else
  make -C "$repo" -f Makefile.pgxs install
fi
