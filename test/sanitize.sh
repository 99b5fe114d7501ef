#!/usr/bin/env bash
# test/sanitize.sh: the pg_regress and isolation suites, and the bad-input
# sweep, against pgmq built with AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   1. copies the tree and builds it with -fsanitize=address,undefined (g++,
#      frame pointers kept, the sanitizer runtimes linked into pgmq.so);
#   2. installs that build into a private, relocated copy of the PostgreSQL 15
#      installation (test/lib/private_install.sh), never over the system's
#      pgmq, which test/run and everything else keep using;
#   3. starts a throwaway cluster from it (docker/postgresql.conf, port
#      PGMQ_SANITIZE_PORT or 5435) with the ASan runtime preloaded, since the
#      server itself is not instrumented (see below for the preload order).
#      ASAN_OPTIONS=detect_leaks=0, because PostgreSQL frees memory by
#      exiting (and by resetting memory contexts) by design;
#   4. runs pg_regress, isolation and test/integration/bad_input_sweep.py
#      (without its 100 MB payloads) against it;
#   5. fails on any failed test, and on any sanitizer report or crashed
#      backend in the server log;
#   6. checks the harness: a heap overflow planted in a function built the
#      same way must be reported.
#
# Needs root (the server runs as the postgres OS user). Ends with one line
# "All N tests passed." or "F of N tests failed." for test/run's tally.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/cluster.sh"
. "$repo/test/lib/private_install.sh"

port=${PGMQ_SANITIZE_PORT:-5435}
work=$(mktemp -d /tmp/pgmq-sanitize.XXXXXX)
chmod 755 "$work"
src=$work/src
install_root=$work/install
cluster=$work/cluster
tests=0
failures=0

finish() {
  if [ -n "${server_pid:-}" ] && kill -0 "$server_pid" 2>/dev/null; then
    as_postgres "$PG_BIN_SANITIZE/pg_ctl" -D "$cluster/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      { pkill -KILL -P "$server_pid"; kill -KILL "$server_pid"; } 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  if [ -n "${PGMQ_SANITIZE_KEEP:-}" ]; then
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM

# result NAME STATUS: counts one check.
result() {
  tests=$((tests + 1))
  if [ "$2" -eq 0 ]; then
    echo "== sanitizers: $1: ok"
  else
    failures=$((failures + 1))
    echo "== sanitizers: $1: FAILED"
  fi
}

# 1-2. Build from a copy (the tree's own objects stay as they are) and install privately.
mkdir "$src"
tar -C "$repo" --exclude='*.o' --exclude='*.so' --exclude=./build --exclude=./.git \
  --exclude=./results --exclude=./output_iso -cf - . | tar -C "$src" -xf - || exit 1
asan_runtime=$(g++ -print-file-name=libasan.so)
asan_runtime=$(readlink -f "$asan_runtime")
if [ ! -f "$asan_runtime" ]; then
  echo "libasan.so not found (g++ -print-file-name=libasan.so)"
  echo "0 of 1 tests failed."
  exit 1
fi
PG_BIN_SANITIZE=$(make_private_install "$install_root") || exit 1
flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
if ! EXTRA_CXXFLAGS="$flags" EXTRA_LDFLAGS="$flags" DESTDIR=$install_root \
  "$src/docker/build.sh" >"$work/build.log" 2>&1; then
  tail -n 30 "$work/build.log"
  result "build with $flags" 1
  echo "$failures of $tests tests failed."
  exit 1
fi
result "build with $flags" 0
ldd "$install_root/usr/lib/postgresql/$PG_MAJOR/lib/pgmq.so" | grep libasan >/dev/null
result "pgmq.so linked with the ASan runtime" $?
chmod -R a+rX "$install_root"

# 3. A cluster from the private installation, ASan preloaded into the server.
mkdir -p "$cluster/data" "$cluster/socket"
chown postgres:postgres "$cluster" "$cluster/data" "$cluster/socket"
chmod 700 "$cluster/data"
as_postgres "$PG_BIN_SANITIZE/initdb" --auth=trust -U postgres --encoding=UTF8 --locale=C \
  -D "$cluster/data" >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log"; exit 1; }
cat >>"$cluster/data/postgresql.conf" <<EOF

include '$repo/docker/postgresql.conf'
include '$repo/test/lib/test-cluster.conf'
listen_addresses = ''
port = $port
unix_socket_directories = '$cluster/socket'
EOF
log=$cluster/server.log
touch "$log" && chown postgres:postgres "$log"
# LD_PRELOAD order. ASan initialises lazily on its first intercepted call. The
# constructors of some libraries the server links (libgpg-error, GnuTLS,
# Kerberos) call bindtextdomain() before ASan's own constructor has run, so
# ASan would initialise inside glibc's gettext lock, where its failing
# dlsym() calls make glibc unlock that lock once too often: the server hangs
# at its first message translation. Preloading those libraries ahead of
# libasan runs their constructors after ASan's (the dynamic loader runs
# constructors in reverse load order); verify_asan_link_order=0 allows that.
early=
for lib in $(ldd "$PG_BIN_SANITIZE/postgres" | awk '/=>/ { print $3 }'); do
  case $lib in */libstdc++*) continue ;; esac  # keep ASan's operator new first
  # grep reads all of nm's output: with -q, nm could die of SIGPIPE and pipefail
  # would turn the match into a miss.
  nm -D --undefined-only "$lib" 2>/dev/null | grep -w bindtextdomain >/dev/null && early="$early $lib"
done
preload="${early# } $asan_runtime"
# abort_on_error: a report ends the backend with SIGABRT, so it also shows up
# as a crash (ASan's default exit code, 1, looks like a normal backend exit).
asan_options="detect_leaks=0:halt_on_error=1:abort_on_error=1:disable_coredump=1:verify_asan_link_order=0"
ubsan_options="print_stacktrace=1:halt_on_error=0"
# The server is started directly, not through pg_ctl: pg_ctl would run with
# the same preload, and in testing it hung at its own exit.
cd / || exit 1
runuser -u postgres -- env LD_PRELOAD="$preload" ASAN_OPTIONS="$asan_options" \
  UBSAN_OPTIONS="$ubsan_options" "$PG_BIN_SANITIZE/postgres" -D "$cluster/data" >>"$log" 2>&1 &
server_pid=$!  # runuser's; the postmaster is its child
ready=1
for _ in $(seq 1 240); do
  if psql -X -At -h "$cluster/socket" -p "$port" -U postgres -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
    ready=0
    break
  fi
  sleep 0.5
done
if [ "$ready" -ne 0 ]; then
  tail -n 40 "$log"
  result "server start with ASan preloaded" 1
  echo "$failures of $tests tests failed."
  exit 1
fi
export PGHOST=$cluster/socket PGPORT=$port PGUSER=postgres
# The server runs the sanitizer build from the private installation, with
# the ASan runtime loaded.
maps=/proc/$(head -n 1 "$cluster/data/postmaster.pid")/maps
grep -q "$install_root/usr/lib/postgresql/$PG_MAJOR/lib/pgmq.so" "$maps" && grep -q libasan "$maps"
result "server runs the sanitizer build" $?

# 4. The suites. Their own summaries are kept in logs, shown on failure.
cd "$src" || exit 1
make -f Makefile.pgxs installcheck ISOLATION= >"$work/regress.log" 2>&1
status=$?
grep -E '^test ' "$work/regress.log" | sed 's/^/   /'
[ "$status" -ne 0 ] && [ -f regression.diffs ] && head -n 100 regression.diffs
result "pg_regress" "$status"

make -f Makefile.pgxs installcheck REGRESS= >"$work/isolation.log" 2>&1
status=$?
grep -E '^test ' "$work/isolation.log" | sed 's/^/   /'
[ "$status" -ne 0 ] && [ -f regression.diffs ] && head -n 100 regression.diffs
result "isolation" "$status"

PGMQ_SWEEP_QUICK=1 timeout 600 /usr/bin/python3 test/integration/bad_input_sweep.py >"$work/sweep.log" 2>&1
status=$?
grep -vE '^FAIL' "$work/sweep.log" | tail -n 8 | sed 's/^/   /'
grep -E '^FAIL' "$work/sweep.log" | head -n 20
result "bad-input sweep" "$status"

# 5. Any sanitizer report, or a backend that died, fails the run.
reports=$(grep -cE 'ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer' "$log")
crashes=$(grep -cE 'terminated by signal' "$log")
echo "   server log: $reports sanitizer report lines, $crashes crashed server processes"
if [ "$reports" -ne 0 ] || [ "$crashes" -ne 0 ]; then
  grep -E -B2 -A30 'ERROR: AddressSanitizer|runtime error:|terminated by signal' "$log" | head -n 150
fi
result "no sanitizer report in the server log" "$reports"
result "no crashed server process" "$crashes"

# 6. The harness itself: a heap overflow planted in a function built the same
# way must be reported, or the zero above would mean nothing.
cat >"$work/canary.cpp" <<'EOF_CANARY'
extern "C" {
#include "postgres.h"
#include "fmgr.h"
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(pgmq_sanitize_canary);
Datum pgmq_sanitize_canary(PG_FUNCTION_ARGS)
{
	volatile char *bytes = new char[8];
	bytes[PG_GETARG_INT32(0)] = 1;  // called with 8: one past the end
	delete[] bytes;
	PG_RETURN_VOID();
}
}
EOF_CANARY
canary=$install_root/usr/lib/postgresql/$PG_MAJOR/lib/pgmq_sanitize_canary.so
g++ -shared -fPIC $flags -I"$("$PRIVATE_PG_BIN_SOURCE/pg_config" --includedir-server)" "$work/canary.cpp" -o "$canary" &&
  chmod a+r "$canary" &&
  psql -X -q -d postgres -c "CREATE FUNCTION pg_temp.canary(integer) RETURNS void
      AS '$canary', 'pgmq_sanitize_canary' LANGUAGE C STRICT" -c "SELECT pg_temp.canary(8)" >/dev/null 2>&1
caught=1
for _ in $(seq 1 20); do
  if grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$log" && grep -q 'terminated by signal 6' "$log"; then
    caught=0
    break
  fi
  sleep 0.5
done
result "a planted heap overflow is reported (the harness works)" $caught
as_postgres "$PG_BIN_SANITIZE/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1

if [ "$failures" -eq 0 ]; then
  echo "All $tests tests passed."
else
  echo "$failures of $tests tests failed."
fi
[ "$failures" -eq 0 ]
