#!/usr/bin/env bash
# ok/fail always return 0, so `[ test ] && ok ... || fail ...` is if-then-else.
# shellcheck disable=SC2015
# docker/test-image.sh [MAJOR]: builds docker/Dockerfile for PostgreSQL MAJOR
# (default: the Dockerfile's default PG_MAJOR) with podman, from the tracked
# files of this checkout, starts the image and checks it from outside, as a
# user would after `docker run`:
#   - the server accepts TCP connections with the password (and not without);
#   - the init scripts installed pgmq and pg_partman, and ran a mounted
#     /docker-entrypoint-initdb.d after the image's own;
#   - pg_partman_bgw runs, with the interval given on the command line and the
#     image's role and database;
#   - a partitioned queue made through pgmq gets partitions premade by
#     pg_partman's background worker within its interval;
#   - the image's HEALTHCHECK command passes;
#   - a new container over the same data directory keeps the queue and its
#     messages, and does not initialize again;
#   - a first start without POSTGRES_PASSWORD is refused with a clear message,
#     and so is a data directory of another PostgreSQL major.
# Ends with "N passed, N failed"; exit 0 only when nothing failed. Cleans up
# (servers, mounts, containers, temporary files) on every exit.
#
# Needs root, podman and debootstrap (installed with apt-get when missing) and
# Debian's archive. No registry is needed: the Debian base image is made with
# debootstrap and `podman import`, and kept (as docker.io/library/debian:SUITE-slim)
# for later runs.
#
# Where `podman run` works the containers run with it (port published on
# 127.0.0.1 only). Where it does not (a sandbox without CAP_SYS_RESOURCE:
# "crun: setrlimit RLIMIT_NPROC: Operation not permitted"), each container is
# created and mounted with podman, and the image's ENTRYPOINT runs in that
# root through chroot, as the image's USER, with the image's ENV, the data
# directory bind-mounted where the VOLUME is. There the server shares the
# host's network, so in place of the port mapping it listens on 127.0.0.1 at
# the test port (PGPORT in the container's environment, as `-e PGPORT=` would).
#
# Environment: PGMQ_IMAGE_TEST_PORT (default 55432), PGMQ_IMAGE_KEEP=1 keeps
# the image afterwards (it is kept anyway; set PGMQ_IMAGE_KEEP=0 to remove it).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dockerfile=$repo/docker/Dockerfile
default_major=$(sed -n 's/^ARG PG_MAJOR=//p' "$dockerfile")
major=${1:-$default_major}
port=${PGMQ_IMAGE_TEST_PORT:-55432}
image=localhost/pgmq-cpp:$major-test
bgw_interval=5

# The Debian suite that packages each major (as in the Dockerfile's header).
case $major in
  15) suite=bookworm ;;
  17) suite=trixie ;;
  18) suite=forky ;;
  *)
    echo "test-image: no Debian suite known for PostgreSQL $major (15, 17, 18)" >&2
    exit 2
    ;;
esac

passed=0
failed=0
ok() {
  echo "ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

if [ "$(id -u)" -ne 0 ]; then
  echo "test-image: needs root (podman mount, chroot)" >&2
  exit 2
fi

work=$(mktemp -d /tmp/pgmq-image-test.XXXXXX)
chmod 755 "$work"
containers=() # names of the containers this run made

# ---- containers: `podman run`, or create + mount + chroot ---------------------
# Per container NAME in chroot mode: $work/NAME.root (the mounted root),
# $work/NAME.pid (the entrypoint's pid, which becomes the postmaster's),
# $work/NAME.mounts (what was bind-mounted, innermost last).

mode=
uid='' gid='' home=''
user='' workdir='' stopsignal=''
entrypoint=() cmd=() image_env=() health=()
volume=''

# in_root NAME CMD...: CMD in container NAME as the image's USER with its ENV
# (plus PGPORT in chroot mode), like `docker exec`.
in_root() {
  local name=$1
  shift
  if [ "$mode" = run ]; then
    podman exec "$name" "$@"
  else
    chroot --userspec="$uid:$gid" --groups="$gid" "$(cat "$work/$name.root")" \
      /usr/bin/env -i ${workdir:+-C "$workdir"} "${image_env[@]}" HOME="$home" PGPORT="$port" "$@"
  fi
}

# start_container NAME DATA_DIR INIT_DIR ENV_ASSIGNMENTS... -- POSTGRES_ARGS...:
# starts the image like `docker run -d -p 127.0.0.1:PORT:5432 -v DATA_DIR:VOLUME
# -v INIT_DIR:/docker-entrypoint-initdb.d:ro -e ... IMAGE POSTGRES_ARGS...`;
# its output goes to $work/NAME.log.
start_container() {
  local name=$1 data=$2 init=$3
  shift 3
  local envs=() args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  args=("$@")
  containers+=("$name")
  if [ "$mode" = run ]; then
    local eopts=() e
    for e in "${envs[@]}"; do eopts+=(-e "$e"); done
    podman run -d --name "$name" -p "127.0.0.1:$port:5432" \
      -v "$data:$volume" ${init:+-v "$init:/docker-entrypoint-initdb.d:ro"} \
      "${eopts[@]}" "$image" "${args[@]}" >/dev/null 2>"$work/$name.log"
    return
  fi
  local cid root
  cid=$(podman create --name "$name" "$image") || return 1
  root=$(podman mount "$cid") || return 1
  echo "$root" >"$work/$name.root"
  : >"$work/$name.mounts"
  local m
  for m in proc dev sys; do
    mount --bind "/$m" "$root/$m" && echo "$root/$m" >>"$work/$name.mounts"
  done
  mkdir -p "$root$volume"
  mount --bind "$data" "$root$volume" && echo "$root$volume" >>"$work/$name.mounts"
  if [ -n "$init" ]; then
    mkdir -p "$root/docker-entrypoint-initdb.d"
    mount --bind "$init" "$root/docker-entrypoint-initdb.d" &&
      echo "$root/docker-entrypoint-initdb.d" >>"$work/$name.mounts"
    mount -o remount,bind,ro "$root/docker-entrypoint-initdb.d"
  fi
  # The mapped port, emulated: see the header.
  chroot --userspec="$uid:$gid" --groups="$gid" "$root" \
    /usr/bin/env -i ${workdir:+-C "$workdir"} "${image_env[@]}" HOME="$home" PGPORT="$port" "${envs[@]}" \
    "${entrypoint[@]}" "${args[@]}" -c listen_addresses=127.0.0.1 \
    >"$work/$name.log" 2>&1 &
  echo $! >"$work/$name.pid"
}

# container_log NAME: what the container wrote, like `docker logs`.
container_log() {
  if [ "$mode" = run ]; then
    cat "$work/$1.log"
    podman logs "$1" 2>&1
  else
    cat "$work/$1.log"
  fi
}

# running NAME: whether the container's main process is still alive.
running() {
  if [ "$mode" = run ]; then
    [ "$(podman inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]
  else
    kill -0 "$(cat "$work/$1.pid")" 2>/dev/null
  fi
}

# server_processes NAME: the command lines of the server's processes (the
# postmaster's children), one a line.
server_processes() {
  if [ "$mode" = run ]; then
    podman top "$1" args | tail -n +2
  else
    ps -o args= --ppid "$(cat "$work/$1.pid")"
  fi
}

# await_exit NAME: waits up to 60 s for the container to end; sets status
# to its exit status, or "running". (Sets a variable rather than printing:
# `wait` must run in this shell, the container's parent.)
status=
await_exit() {
  local name=$1 _
  for _ in $(seq 1 120); do
    running "$name" || break
    sleep 0.5
  done
  if [ "$mode" = run ]; then
    status=$(podman wait "$name" 2>/dev/null)
  else
    local pid
    pid=$(cat "$work/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
      status=running
    else
      wait "$pid"
      status=$?
    fi
  fi
}

# stop_container NAME: the image's STOPSIGNAL, as `docker stop` sends it;
# sets status as await_exit does.
stop_container() {
  local name=$1
  if [ "$mode" = run ]; then
    podman stop -t 60 "$name" >/dev/null 2>&1
    status=$(podman wait "$name" 2>/dev/null)
  else
    kill -s "${stopsignal:-TERM}" "$(cat "$work/$name.pid")" 2>/dev/null
    await_exit "$name"
  fi
}

# remove_container NAME: ends it if it still runs, unmounts, removes it.
remove_container() {
  local name=$1
  if [ "$mode" = run ]; then
    podman rm -f -t 5 "$name" >/dev/null 2>&1
    return 0
  fi
  local pid m
  if [ -f "$work/$name.pid" ]; then
    pid=$(cat "$work/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
      kill -s QUIT "$pid" 2>/dev/null # immediate shutdown
      sleep 1
      kill -s KILL "$pid" 2>/dev/null
    fi
    rm -f "$work/$name.pid"
  fi
  if [ -f "$work/$name.mounts" ]; then
    tac "$work/$name.mounts" | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -f "$work/$name.mounts"
  fi
  podman umount "$name" >/dev/null 2>&1
  podman rm -f "$name" >/dev/null 2>&1
  return 0
}

start_time=$(date +%s)
cleanup() {
  local name
  for name in "${containers[@]}"; do
    remove_container "$name"
  done
  [ "${PGMQ_IMAGE_KEEP:-1}" = 0 ] && podman rmi -f "$image" >/dev/null 2>&1
  # Anything still mounted below the work directory (debootstrap's /proc
  # after an interrupt), innermost first, before removing it.
  findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf --one-file-system "$work"
  echo "test-image (PostgreSQL $major): $(($(date +%s) - start_time)) s in all"
  echo "$passed passed, $failed failed"
}
trap cleanup EXIT
trap 'fail "interrupted"; exit 130' INT TERM

# ---- tools and the base image -------------------------------------------------
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >"$work/apt.log" 2>&1 ||
    { cat "$work/apt.log"; fail "apt-get install ${missing[*]}"; exit 1; }
fi

# ensure_base SUITE: docker.io/library/debian:SUITE-slim (docker/base-image.sh,
# which the programs' images test shares).
ensure_base() {
  "$repo/docker/base-image.sh" "$1"
}
if ensure_base "$suite"; then
  ok "base image debian:$suite-slim"
else
  fail "could not make the base image debian:$suite-slim"
  exit 1
fi

# ---- build ---------------------------------------------------------------------
# The context is the checkout's tracked and unignored files, as a clone would
# have them: no object files from host builds (against another major).
context=$work/context
mkdir -p "$context"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -c) | tar -x -C "$context"
echo "== building $image (PG_MAJOR=$major, DEBIAN_SUITE=$suite)"
t0=$SECONDS
if podman build --isolation chroot --pull=never --format docker \
  --build-arg PG_MAJOR="$major" --build-arg DEBIAN_SUITE="$suite" \
  -f "$context/docker/Dockerfile" -t "$image" "$context" >"$work/build.log" 2>&1; then
  build_seconds=$((SECONDS - t0))
  ok "image built in $build_seconds s"
else
  tail -n 40 "$work/build.log"
  fail "podman build failed (PostgreSQL $major on $suite)"
  exit 1
fi
test_t0=$SECONDS

# ---- what the image says about itself ------------------------------------------
# shellcheck disable=SC1090
. <(podman image inspect "$image" | /usr/bin/python3 -c '
import json, shlex, sys
img = json.load(sys.stdin)[0]
cfg = img.get("Config") or {}
hc = img.get("Healthcheck") or cfg.get("Healthcheck") or {}
def arr(name, v):
    print(name + "=(" + " ".join(shlex.quote(x) for x in (v or [])) + ")")
def val(name, v):
    print(name + "=" + shlex.quote(v or ""))
val("user", cfg.get("User"))
val("workdir", cfg.get("WorkingDir"))
val("stopsignal", cfg.get("StopSignal"))
arr("entrypoint", cfg.get("Entrypoint"))
arr("cmd", cfg.get("Cmd"))
arr("image_env", cfg.get("Env"))
arr("health", hc.get("Test"))
val("volume", sorted(cfg.get("Volumes") or {"": None})[0])
')
[ "$workdir" = / ] && workdir=
echo "image: USER=$user ENTRYPOINT=${entrypoint[*]} CMD=${cmd[*]} STOPSIGNAL=$stopsignal VOLUME=$volume HEALTHCHECK=${health[*]}"
[ ${#entrypoint[@]} -gt 0 ] || fail "the image has no ENTRYPOINT"
if [ -n "$volume" ]; then
  ok "the image declares VOLUME $volume"
else
  fail "the image declares no VOLUME for its data"
  exit 1
fi
if [ ${#health[@]} -gt 1 ]; then
  ok "the image keeps its HEALTHCHECK (${health[*]})"
else
  fail "the image has no HEALTHCHECK (built without --format docker?)"
fi
if printf '%s\n' "${image_env[@]}" | grep -qx "PG_MAJOR=$major"; then
  ok "the image's environment says PG_MAJOR=$major"
else
  fail "the image's environment lacks PG_MAJOR=$major: ${image_env[*]}"
fi

# The image's USER, as numbers from the image's own /etc/passwd.
podman create --name "pgmq-image-test-$$-probe" "$image" >/dev/null &&
  containers+=("pgmq-image-test-$$-probe")
probe_root=$(podman mount "pgmq-image-test-$$-probe")
u=${user%%:*}
if [[ $u =~ ^[0-9]+$ ]]; then
  entry=$(awk -F: -v u="$u" '$3 == u' "$probe_root/etc/passwd")
else
  entry=$(awk -F: -v u="${u:-root}" '$1 == u' "$probe_root/etc/passwd")
fi
IFS=: read -r _ _ uid gid _ home _ <<<"$entry"
[[ $user == *:* ]] && gid=${user#*:}
remove_container "pgmq-image-test-$$-probe"
if [ -z "$uid" ]; then
  fail "the image's USER '$user' is not in its /etc/passwd"
  exit 1
fi

# podman run, where the runtime allows it.
if podman run --rm --net=none "$image" true >"$work/run-probe.log" 2>&1; then
  mode=run
  echo "== containers run with podman run"
else
  mode=chroot
  echo "== podman run fails here ($(grep -m1 -o 'setrlimit[^"]*\|Error.*' "$work/run-probe.log" | head -c 120)); running containers by chroot"
fi

if ss -Hltn "sport = :$port" | grep -q .; then
  fail "port $port on this machine is taken; set PGMQ_IMAGE_TEST_PORT"
  exit 1
fi

# psql from outside, over TCP as a client of the published port.
password=image-test-$RANDOM$RANDOM
tcp_psql() {
  PGPASSWORD=$password PGCONNECT_TIMEOUT=5 psql -X -q -tA -v ON_ERROR_STOP=1 -w \
    "host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable" "$@"
}
# wait_tcp NAME SECONDS: until the server answers over TCP with the password.
wait_tcp() {
  local name=$1 _
  for _ in $(seq 1 $((2 * $2))); do
    tcp_psql -c 'SELECT 1' >/dev/null 2>&1 && return 0
    running "$name" || break
    sleep 0.5
  done
  return 1
}
new_dir() { # new_dir PATH: a directory the image's USER owns
  mkdir -p "$1" && chown "$uid:$gid" "$1" && chmod 700 "$1"
}

# ---- 1. no password: refused -------------------------------------------------
new_dir "$work/nopw-data"
c=pgmq-image-test-$$-nopw
start_container "$c" "$work/nopw-data" "" --
await_exit "$c"
if [ "$status" != running ] && [ "$status" != 0 ] && container_log "$c" | grep -q 'set POSTGRES_PASSWORD'; then
  ok "a first start without POSTGRES_PASSWORD is refused (exit $status): $(container_log "$c" | grep -m1 POSTGRES_PASSWORD)"
else
  container_log "$c"
  fail "a first start without POSTGRES_PASSWORD was not refused clearly (status $status)"
fi
[ -z "$(ls -A "$work/nopw-data")" ] || fail "the refused start left files in the data directory"
remove_container "$c"

# ---- data of another major: refused, saying how to upgrade --------------------
other=$((major == 15 ? 14 : 15))
new_dir "$work/other-data"
echo "$other" >"$work/other-data/PG_VERSION"
touch "$work/other-data/pgmq-image-initialized"
chown -R "$uid:$gid" "$work/other-data"
c=pgmq-image-test-$$-other
start_container "$c" "$work/other-data" "" POSTGRES_PASSWORD="$RANDOM" --
await_exit "$c"
if [ "$status" != running ] && [ "$status" != 0 ] && container_log "$c" | grep -q "holds a PostgreSQL $other cluster.*pg_upgrade"; then
  ok "a data directory of PostgreSQL $other is refused, pointing to pg_upgrade (exit $status)"
else
  container_log "$c"
  fail "a data directory of PostgreSQL $other was not refused clearly (status $status)"
fi
remove_container "$c"

# ---- 2. first start ---------------------------------------------------------
data=$work/data
new_dir "$data"
init=$work/initdb
mkdir -p "$init"
cat >"$init/20-app.sql" <<'SQL'
-- A user's init script, mounted at /docker-entrypoint-initdb.d: runs after the image's.
SELECT pgmq.create('from_init');
SQL
chmod 755 "$init"
chmod 644 "$init/20-app.sql"
c1=pgmq-image-test-$$-first
# pgmq's own maintenance worker off for this start, so that the partitions
# below can only come from pg_partman's worker.
start_container "$c1" "$data" "$init" POSTGRES_PASSWORD="$password" -- \
  postgres -c pg_partman_bgw.interval=$bgw_interval -c pgmq.maintenance_interval=0
if wait_tcp "$c1" 180; then
  ok "first start: the server accepts TCP connections on 127.0.0.1:$port with the password"
else
  container_log "$c1" | tail -n 40
  fail "first start: no TCP connection with the password"
  exit 1
fi
if PGPASSWORD=wrong-$password psql -X -w -tA "host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable" \
  -c 'SELECT 1' >/dev/null 2>"$work/wrongpw.log"; then
  fail "a wrong password is accepted over TCP"
elif grep -q 'password authentication failed' "$work/wrongpw.log"; then
  ok "a wrong password is refused over TCP"
else
  fail "a wrong password failed otherwise: $(cat "$work/wrongpw.log")"
fi

got=$(tcp_psql -c "SELECT current_setting('server_version_num')::int / 10000")
[ "$got" = "$major" ] && ok "the server is PostgreSQL $major" || fail "the server is PostgreSQL $got, not $major"

got=$(tcp_psql -c "SELECT string_agg(e.extname || ':' || n.nspname, ',' ORDER BY e.extname)
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname IN ('pg_partman', 'pgmq')")
[ "$got" = "pg_partman:partman,pgmq:pgmq" ] &&
  ok "the init scripts installed pg_partman (schema partman) and pgmq" ||
  fail "extensions after the first start: '$got'"
got=$(tcp_psql -c "SELECT count(*) FROM pgmq.list_queues() WHERE queue_name = 'from_init'")
[ "$got" = 1 ] && ok "the mounted /docker-entrypoint-initdb.d script ran" ||
  fail "the mounted init script's queue is missing ($got)"

got=$(tcp_psql -c "SELECT current_setting('pg_partman_bgw.interval') || '/' || current_setting('pg_partman_bgw.role')
  || '/' || current_setting('pg_partman_bgw.dbname')")
[ "$got" = "$bgw_interval/postgres/postgres" ] &&
  ok "pg_partman_bgw settings: interval/role/dbname = $got" ||
  fail "pg_partman_bgw settings are '$got', expected $bgw_interval/postgres/postgres"
got=$(tcp_psql -c "SELECT sourcefile FROM pg_settings WHERE name = 'pg_partman_bgw.role'")
[ "$got" = /opt/pgmq/postgresql.conf ] && ok "pg_partman_bgw.role comes from the image's postgresql.conf" ||
  fail "pg_partman_bgw.role comes from '$got'"
# pg_partman's main worker connects to no database, so pg_stat_activity does
# not show it; the server's processes do.
if server_processes "$c1" | grep -q 'pg_partman master background worker'; then
  ok "the server runs pg_partman's background worker: $(server_processes "$c1" | grep -m1 'pg_partman')"
else
  fail "no pg_partman background worker among the server's processes: $(server_processes "$c1" | tr '\n' ';')"
fi

# A partitioned queue: 10 ids a partition, premake 2, so creation makes the
# partitions for ids 0..29. 15 messages reach p10, two ahead of which is
# p30: the worker must make it within its interval. (Beyond the premade
# range messages would go to the default partition, and pg_partman makes
# no partition over rows held there.)
partitions() {
  tcp_psql -c "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'pgmq.q_image_test'::regclass"
}
if tcp_psql >"$work/queue.log" 2>&1 <<'SQL'; then
SELECT pgmq.create_partitioned('image_test', '10', '100', 2);
SELECT pgmq.send_batch('image_test', array_agg(jsonb_build_object('n', g))) FROM generate_series(1, 15) g;
SQL
  echo "partitions after create + 15 sends: $(partitions)"
  t0=$SECONDS
  premade=
  while [ $((SECONDS - t0)) -le $((2 * bgw_interval + 5)) ]; do
    if [[ ,$(partitions), == *,q_image_test_p30,* ]]; then
      premade=$((SECONDS - t0))
      break
    fi
    sleep 1
  done
  if [ -n "$premade" ]; then
    ok "pg_partman_bgw premade the queue's next partition (p30) ${premade} s after the sends (interval $bgw_interval s)"
  else
    fail "no partition p30 after $((2 * bgw_interval + 5)) s: $(partitions)"
  fi
else
  cat "$work/queue.log"
  fail "could not create and fill a partitioned queue"
fi

# The HEALTHCHECK, as the engine runs it: inside the container.
health_check() {
  case ${health[0]} in
    CMD) in_root "$1" "${health[@]:1}" ;;
    CMD-SHELL) in_root "$1" /bin/sh -c "${health[1]}" ;;
    *) return 1 ;;
  esac
}
if health_check "$c1" >"$work/health.log" 2>&1; then
  ok "the HEALTHCHECK command passes"
else
  cat "$work/health.log"
  fail "the HEALTHCHECK command fails on a running, initialized server"
fi

stop_container "$c1"
[ "$status" = 0 ] && ok "stopped with STOPSIGNAL ${stopsignal:-TERM}: exit 0" ||
  fail "stopping with STOPSIGNAL ${stopsignal:-TERM}: status $status"
remove_container "$c1"

# ---- 3. a new container over the same data directory -------------------------
c2=pgmq-image-test-$$-second
start_container "$c2" "$data" "" POSTGRES_PASSWORD="ignored-$password" -- "${cmd[@]}"
if wait_tcp "$c2" 120; then
  ok "a new container over the same data directory accepts the first password"
  container_log "$c2" | grep -q 'initialization complete' && fail "the second start initialized again"
  got=$(tcp_psql -c "SELECT count(*) FROM pgmq.q_image_test")
  [ "$got" = 15 ] && ok "the partitioned queue kept its 15 messages" || fail "the queue holds $got messages, not 15"
  got=$(tcp_psql -c "SELECT message->>'n' FROM pgmq.pop('image_test')")
  [ "$got" = 1 ] && ok "the queue still works: pop returns message 1" || fail "pop returned '$got'"
  got=$(tcp_psql -c "SELECT current_setting('pg_partman_bgw.interval')")
  [ "$got" = 60 ] && ok "with no arguments, the image's pg_partman_bgw.interval (60) applies" ||
    fail "pg_partman_bgw.interval is $got without arguments"
  if health_check "$c2" >"$work/health2.log" 2>&1; then
    ok "the HEALTHCHECK passes after the restart"
  else
    cat "$work/health2.log"
    fail "the HEALTHCHECK fails after the restart"
  fi
  stop_container "$c2"
  [ "$status" = 0 ] || fail "second container: stop status $status"
else
  container_log "$c2" | tail -n 40
  fail "a new container over the same data directory did not come up"
fi
remove_container "$c2"

echo "image checks (PostgreSQL $major): $((SECONDS - test_t0)) s; build $build_seconds s"
[ "$failed" -eq 0 ]
