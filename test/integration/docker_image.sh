#!/usr/bin/env bash
# test/integration/docker_image.sh: checks the Docker image without a Docker
# engine, by running on the host what the image runs.
#   1. Every file docker/Dockerfile copies from the build context exists, and
#      every file it copies from the build stage is produced by docker/build.sh
#      (run here with DESTDIR, as the build stage runs it); the staged library
#      and SQL files are those the test cluster loaded.
#   2. The packages the Dockerfile installs exist in Debian 12's lists.
#   3. docker/postgresql.conf keeps the required settings, and the running test
#      cluster took them from that file.
#   4. docker/init.sh with docker/init.d runs cleanly, twice, in a fresh
#      database of the test cluster, and leaves pg_partman (schema partman)
#      and pgmq working there.
#   5. The image's entrypoint and health check, run from a copy of the files
#      laid out as the Dockerfile's COPY lines lay them out in the image,
#      initialize a new cluster, start it healthy, and start it again.
# The Dockerfile takes the PostgreSQL major and Debian suite as build
# arguments; this test reads it as built for the host's (15, bookworm).
# docker/test-image.sh builds the image itself with podman and starts it, for
# any major: it is slower, and needs podman and the archive.
# test/run runs it with PGHOST/PGPORT/PGUSER pointing at its cluster; exit 0
# is a pass. Needs root (the entrypoint runs as postgres through runuser).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
dockerfile=docker/Dockerfile
conf=docker/postgresql.conf

# The host's major and suite: the build arguments this test reads the Dockerfile with.
host_major=15
host_suite=bookworm

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
ok() { echo "ok: $*"; }

work=$(mktemp -d /tmp/pgmq-docker-test.XXXXXX)
chmod 755 "$work"
db=pgmq_docker_init_$$
entry_pid=
cleanup() {
  if [ -n "$entry_pid" ] && [ -f "$work/pgdata/postmaster.pid" ]; then
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$work/pgdata" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The Dockerfile's instructions, one per line: continuation lines joined,
# comments and blank lines dropped, the build arguments replaced by the host's.
instructions() {
  sed -e '/^[[:space:]]*#/d' -e "s/\${PG_MAJOR}/$host_major/g" -e "s/\${DEBIAN_SUITE}/$host_suite/g" "$dockerfile" | awk '
    { line = $0
      if (sub(/\\[[:space:]]*$/, "", line)) { acc = acc line " "; next }
      acc = acc line
      if (acc ~ /[^[:space:]]/) print acc
      acc = "" }'
}

# ---- 1. COPY sources, and the staged build -----------------------------------
stage=$work/stage
echo "== building with docker/build.sh into a staging directory (DESTDIR), as the build stage does"
if ! DESTDIR=$stage docker/build.sh >"$work/build.log" 2>&1; then
  cat "$work/build.log"
  fail "docker/build.sh failed"
fi

grep -Eq '^RUN .*docker/build\.sh' "$dockerfile" || fail "the Dockerfile's build stage does not run docker/build.sh"
grep -q 'docker/build.sh' scripts/lib/cluster.sh || fail "scripts/lib/cluster.sh does not build with docker/build.sh"

image=$work/image  # the runtime image's files, as far as COPY puts them there
mkdir -p "$image"
copies=0
while read -r keyword rest; do
  case ${keyword^^} in
    COPY | ADD) ;;
    *) continue ;;
  esac
  if [ "${keyword^^}" = ADD ]; then
    fail "ADD is not used by this image (it fetches URLs and unpacks archives): $rest"
    continue
  fi
  if [ "${rest:0:1}" = '[' ]; then
    fail "COPY in JSON form is not checked by this test; write it plainly: $rest"
    continue
  fi
  read -r -a words <<<"$rest"
  from=
  args=()
  for w in "${words[@]}"; do
    case $w in
      --from=*) from=${w#--from=} ;;
      --*) ;;
      *) args+=("$w") ;;
    esac
  done
  if [ ${#args[@]} -lt 2 ]; then
    fail "COPY without a source and a destination: $rest"
    continue
  fi
  dest=${args[-1]}
  unset 'args[-1]'
  for src in "${args[@]}"; do
    copies=$((copies + 1))
    if [ -n "$from" ]; then
      if [ "$from" != build ] || [ "${src#/staging/}" = "$src" ]; then
        fail "COPY --from=$from $src: only the build stage's /staging is expected"
        continue
      fi
      path=$stage/${src#/staging/}
    else
      path=$repo/$src
    fi
    # shellcheck disable=SC2206  # a source may be a glob
    matches=($path)
    if [ ! -e "${matches[0]}" ]; then
      fail "COPY ${from:+--from=$from }$src: no such file${from:+ in the staged build}"
      continue
    fi
    # Only the runtime stage's files matter below; the build stage's COPYs go to /src.
    case $dest in
      /opt/* | /usr/*) ;;
      *) continue ;;
    esac
    mkdir -p "$image/$dest"
    for m in "${matches[@]}"; do
      if [ -d "$m" ]; then
        cp -a "$m/." "$image/$dest/"
      else
        cp -a "$m" "$image/$dest/"
      fi
    done
  done
done < <(instructions)
[ "$copies" -gt 0 ] || fail "found no COPY in $dockerfile"
ok "checked $copies COPY sources"

# What the image starts must be among the files the COPYs put there.
for path in $(instructions | grep -E '^(ENTRYPOINT|CMD|HEALTHCHECK)' | grep -oE '"/[^"]+"' | tr -d '"'); do
  if [ -x "$image$path" ]; then
    ok "image file $path exists and is executable"
  else
    fail "$path (ENTRYPOINT/HEALTHCHECK) is not an executable file the Dockerfile copies"
  fi
done
instructions | grep -q '^HEALTHCHECK ' || fail "the Dockerfile has no HEALTHCHECK"
for arg in PG_MAJOR DEBIAN_SUITE; do
  grep -Eq "^ARG $arg=[a-z0-9]+\$" "$dockerfile" || fail "the Dockerfile does not declare ARG $arg with a default"
done
[ "$(instructions | grep -c '^FROM debian:bookworm')" -eq 2 ] ||
  fail "expected two stages FROM debian:bookworm*"

# The test cluster loaded what the image ships: the pgmq.so its postmaster
# mapped (preloaded), and the SQL files of the same installation, which is
# the system's under test/run and a private one under test/dev.sh.
datadir=$(psql -X -tA -d postgres -c 'SHOW data_directory')
postmaster=$(head -n 1 "$datadir/postmaster.pid" 2>/dev/null)
loaded=$(grep -o '/[^ ]*/pgmq\.so$' "/proc/$postmaster/maps" 2>/dev/null | head -n 1)
prefix=${loaded%/usr/lib/postgresql/"$host_major"/lib/pgmq.so}
if [ -z "$loaded" ] || [ "$prefix" = "$loaded" ]; then
  fail "could not find the pgmq.so the test cluster loaded (postmaster '$postmaster', mapped '$loaded')"
  prefix=
fi
for f in usr/lib/postgresql/$host_major/lib/pgmq.so usr/share/postgresql/$host_major/extension/pgmq.control; do
  if [ ! -f "$image/$f" ]; then
    fail "the image would not contain /$f"
  elif cmp -s "$image/$f" "$prefix/$f"; then
    ok "/$f in the image is the file the test cluster uses ($prefix/$f)"
  else
    fail "/$f in the image differs from the test cluster's $prefix/$f"
  fi
done
for f in "$image"/usr/share/postgresql/"$host_major"/extension/pgmq--*.sql; do
  cmp -s "$f" "$prefix/${f#"$image"/}" || fail "${f#"$image"} differs from the test cluster's"
done

# ---- 2. packages -------------------------------------------------------------
for pkg in postgresql-server-dev-15 g++ make nlohmann-json3-dev postgresql-common postgresql-15 postgresql-15-partman; do
  pkg_re=${pkg//./\\.}
  pkg_re=${pkg_re//+/\\+}
  grep -Eq "apt-get install .*[[:space:]]$pkg_re([[:space:]]|$)" <(instructions) ||
    fail "the Dockerfile does not install $pkg"
  if apt-cache show "$pkg" >/dev/null 2>&1; then
    ok "package $pkg is in Debian's lists"
  else
    fail "package $pkg is not in this machine's Debian 12 package lists"
  fi
done

# ---- 3. postgresql.conf ------------------------------------------------------
# The value of a setting as the file sets it (last uncommented assignment).
setting() {
  sed -nE "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*('([^']*)'|([^[:space:]#]+)).*/\\2\\3/p" "$conf" | tail -n 1
}
preload=$(setting shared_preload_libraries)
for lib in pg_partman_bgw pgmq; do
  if [[ ",${preload// /}," == *",$lib,"* ]]; then
    ok "$conf preloads $lib"
  else
    fail "$conf: shared_preload_libraries ('$preload') lacks $lib"
  fi
done
for name in pg_partman_bgw.interval pg_partman_bgw.role pg_partman_bgw.dbname; do
  value=$(setting "${name//./\\.}")
  if [ -n "$value" ]; then
    ok "$conf sets $name = $value"
  else
    fail "$conf does not set $name"
  fi
done
[ "$(setting pg_partman_bgw.dbname)" = postgres ] ||
  fail "pg_partman_bgw.dbname must be postgres, the database docker/init.d sets up"

psql=(psql -X -q -v ON_ERROR_STOP=1 -tA)
# shellcheck disable=SC2016
source_file=$("${psql[@]}" -d postgres -c "SELECT sourcefile FROM pg_settings WHERE name = 'shared_preload_libraries'")
if [ "$source_file" = "$repo/$conf" ]; then
  ok "the test cluster takes shared_preload_libraries from $conf"
else
  fail "the test cluster takes shared_preload_libraries from '$source_file', not $repo/$conf"
fi
for name in shared_preload_libraries pg_partman_bgw.interval pg_partman_bgw.role pg_partman_bgw.dbname; do
  running=$("${psql[@]}" -d postgres -c "SELECT current_setting('$name')")
  expected=$(setting "${name//./\\.}")
  [ "$running" = "$expected" ] || fail "test cluster: $name = '$running', $conf says '$expected'"
done

# ---- 4. init script in a fresh database --------------------------------------
"${psql[@]}" -d postgres -c "CREATE DATABASE $db"
for run in 1 2; do
  if docker/init.sh "$db" docker/init.d >"$work/init$run.log" 2>&1; then
    ok "docker/init.sh run $run in a fresh database"
  else
    cat "$work/init$run.log"
    fail "docker/init.sh run $run failed"
  fi
done
extensions=$("${psql[@]}" -d "$db" -c "SELECT string_agg(e.extname || ':' || n.nspname, ',' ORDER BY e.extname)
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname IN ('pg_partman', 'pgmq')")
[ "$extensions" = "pg_partman:partman,pgmq:pgmq" ] || fail "after init: extensions are '$extensions'"
if "${psql[@]}" -d "$db" >"$work/smoke.log" 2>&1 <<'SQL'
SELECT pgmq.create_partitioned('smoke', '10', '100');
SELECT pgmq.send('smoke', '{"ok": true}');
SELECT count(*) FROM pgmq.read('smoke', 30, 1);
SQL
then
  ok "a partitioned queue works in the initialized database"
else
  cat "$work/smoke.log"
  fail "a partitioned queue does not work in the initialized database"
fi

# ---- 5. entrypoint and health check, from the image's layout ----------------
opt=$image/opt/pgmq
if [ -x "$opt/entrypoint.sh" ] && [ -x "$opt/healthcheck.sh" ]; then
  sock=$work/socket
  mkdir -p "$sock" "$work/pgdata"
  chown postgres:postgres "$sock" "$work/pgdata"
  as_pg=(runuser -u postgres -- env PG_MAJOR="$host_major" PGDATA="$work/pgdata" PGHOST="$sock" PGPORT=5432 PGUSER=postgres)
  # start_entrypoint LOG: the image's CMD (postgres), on a socket of our own
  # and no TCP, where the image would listen on every address.
  start_entrypoint() {
    (cd / && exec "${as_pg[@]}" POSTGRES_PASSWORD=image-test "$opt/entrypoint.sh" \
      postgres -c listen_addresses= -c unix_socket_directories="$sock") >"$1" 2>&1 &
    entry_pid=$!
  }
  # healthy LOG: polls the health check as Docker would, for up to 60 s.
  healthy() {
    local _
    for _ in $(seq 1 120); do
      if (cd / && "${as_pg[@]}" "$opt/healthcheck.sh") >/dev/null 2>&1; then
        return 0
      fi
      kill -0 "$entry_pid" 2>/dev/null || break
      sleep 0.5
    done
    cat "$1"
    return 1
  }
  stop_entrypoint() {
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$work/pgdata" -m fast -w stop >/dev/null
    wait "$entry_pid" || true
    entry_pid=
  }

  # Before initialization, the health check fails.
  if (cd / && "${as_pg[@]}" "$opt/healthcheck.sh") >/dev/null 2>&1; then
    fail "the health check passes with no server running"
  fi
  start_entrypoint "$work/entry1.log"
  if healthy "$work/entry1.log"; then
    ok "first start: the entrypoint initialized the cluster and the health check passes"
    got=$(cd / && "${as_pg[@]}" psql -X -tA -d postgres -c "SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension WHERE extname IN ('pg_partman', 'pgmq')")
    [ "$got" = "pg_partman,pgmq" ] || fail "first start: extensions in postgres are '$got'"
    got=$(cd / && "${as_pg[@]}" psql -X -tA -d postgres -c "SHOW shared_preload_libraries")
    [ "$got" = "$preload" ] || fail "first start: shared_preload_libraries is '$got'"
    grep -q 'host all all all scram-sha-256' "$work/pgdata/pg_hba.conf" ||
      fail "first start: pg_hba.conf does not require a password over TCP"
  else
    fail "first start: the entrypoint did not bring up a healthy server"
  fi
  stop_entrypoint
  start_entrypoint "$work/entry2.log"
  if healthy "$work/entry2.log"; then
    ok "second start: the existing cluster starts healthy"
    grep -q 'initialization complete' "$work/entry2.log" && fail "second start initialized again"
  else
    fail "second start: the server did not come up healthy"
  fi
  stop_entrypoint

  # Without a password the first start refuses, as documented.
  if (cd / && runuser -u postgres -- env PG_MAJOR="$host_major" PGDATA="$work/nopw" "$opt/entrypoint.sh" postgres) >"$work/nopw.log" 2>&1; then
    fail "the entrypoint started without POSTGRES_PASSWORD"
  elif grep -q POSTGRES_PASSWORD "$work/nopw.log"; then
    ok "without POSTGRES_PASSWORD the first start refuses"
  else
    cat "$work/nopw.log"
    fail "without POSTGRES_PASSWORD the entrypoint failed for another reason"
  fi
else
  fail "the image layout lacks /opt/pgmq/entrypoint.sh or /opt/pgmq/healthcheck.sh"
fi

if [ "$failures" -ne 0 ]; then
  echo "docker image checks: $failures failed"
  exit 1
fi
echo "docker image checks: all passed"
