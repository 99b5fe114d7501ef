#!/usr/bin/env bash
# test/integration/debian_packages.sh: the Debian packages, built, checked
# and installed as a user would (docs/getting-started.md#install):
#  - build: scripts/build-packages.sh for PostgreSQL 15 (this host,
#    bookworm, with pgmq-relay and pgmq-console), 17 (trixie) and 18 (forky),
#    each in its suite; lintian of each suite passes (no error, no warning
#    without an override) and the build logs have no warning;
#  - 17 and 18, in the background while 15 is tested: each extension package
#    installed with apt-get into a fresh copy of its suite's minbase root
#    (apt resolves the server and pg_partman), the packaged cluster started
#    with pgmq preloaded, then CREATE EXTENSION pgmq and a queue round trip,
#    a partitioned queue with pg_partman included;
#  - 15, in a fresh bookworm root: the previous package (built from commit
#    $PGMQ_PACKAGE_PREVIOUS, default d490638, with this tree's debian/)
#    installed and given queues and messages; this tree's package installed
#    over it while the server runs; restart and ALTER EXTENSION pgmq UPDATE
#    keep every message; the round trip; removing the package keeps the
#    tables (the server starts once pgmq is out of shared_preload_libraries)
#    and installing it again brings pgmq back;
#  - pgmq-relay and pgmq-console installed there: their system users and
#    conffiles, systemd-analyze verify of both units, and each unit's
#    ExecStart run as its user against the cluster (test/lib/package_services.py).
#
# Host only (it handles the other majors itself) and slow. test/run builds
# every major's packages in the background while the host's suites run
# (--build MAJOR, into PGMQ_DEBIAN_PACKAGES: 17 and 18 in 45 s each, 15 in
# 60 s, measured here); the test itself then takes about 2 minutes. Whatever
# was not built there is built here (a status file in PGMQ_DEBIAN_PACKAGES
# says it was: point it at a fresh folder outside test/run). The phases
# print their seconds.
#
#   debian_packages.sh               the whole test
#   debian_packages.sh --build MAJOR only the packages of MAJOR, into
#                                    $PGMQ_DEBIAN_PACKAGES/<suite> (with a
#                                    .status file for the run that follows)
#
# Needs root, Debian's archive, rabbitmq-server and python3-pika on the host.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/test/lib/rootfs.sh"
TEST_TAG=debian_packages
say() { printf '[%s] %s\n' "$TEST_TAG" "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}
ok() { say "ok: $*"; }

MAJORS="15 17 18"
PREVIOUS=${PGMQ_PACKAGE_PREVIOUS:-d490638}
packages=${PGMQ_DEBIAN_PACKAGES:-}
version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
ext_version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$repo/pgmq.control")

# build_major MAJOR DIR: that major's packages into DIR/<suite>, with lintian;
# DIR/<suite>.status holds the exit status and the seconds it took.
build_major() {
  local major=$1 dir=$2 suite status=0 t=$SECONDS
  suite=$(rootfs_suite "$major")
  mkdir -p "$dir"
  rm -f "$dir/$suite.status"
  # nocheck: the unit tests are test/run's (ctest); skipping them here saves
  # about a third of the host's build.
  DEB_BUILD_OPTIONS=nocheck "$repo/scripts/build-packages.sh" --out "$dir" --majors "$major" --lintian \
    >"$dir/$suite.log" 2>&1 || status=$?
  echo "$status $((SECONDS - t))" >"$dir/$suite.status"
  return "$status"
}

if [ "${1:-}" = --build ]; then
  [ -n "$packages" ] || { echo "--build needs PGMQ_DEBIAN_PACKAGES" >&2; exit 2; }
  build_major "$2" "$packages"
  exit
fi

work=$(mktemp -d /var/tmp/pgmq-debian-packages.XXXXXX)
mounted=()
install_jobs=()  # "pid:major" of the fresh installs running in the background
# release_root ROOT: stops the clusters running in ROOT and unmounts it.
release_root() {
  # shellcheck disable=SC2016 # expanded in the root
  chroot "$1" sh -c 'for c in /etc/postgresql/*/main; do [ -d "$c" ] || continue; v=${c#/etc/postgresql/}; v=${v%/main};
    runuser -u postgres -- pg_ctlcluster "$v" main stop -m fast; done' >/dev/null 2>&1
  umount_rootfs "$1"
}
release_mounted() {
  local root
  for root in "${mounted[@]}"; do
    release_root "$root"
  done
}
cleanup() {
  local status=$? job
  set +e
  # Each job unmounts its root when it ends; its files go only after that.
  for job in "${install_jobs[@]}"; do
    wait "${job%%:*}"
  done
  release_mounted
  rm -rf --one-file-system "$work"
  if [ $status -eq 0 ]; then say "PASS ($SECONDS s)"; else say "FAILED (exit $status, $SECONDS s)"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 143' INT TERM
[ -n "$packages" ] || packages=$work/packages
phase_started=$SECONDS
# phase NAME: the seconds since the last phase, for CI's time budget.
phase() {
  say "== $1: $((SECONDS - phase_started)) s"
  phase_started=$SECONDS
}

# ---- build ----------------------------------------------------------------------
# The package's version follows the extension's: a new extension version
# needs a new changelog entry, or apt would not see an upgrade.
[ "${version%-*}" = "$ext_version" ] ||
  fail "debian/changelog is at $version, pgmq.control at $ext_version: add a changelog entry $ext_version-1"
for major in $MAJORS; do
  suite=$(rootfs_suite "$major")
  if [ -f "$packages/$suite.status" ]; then
    how="built before this test"
  else
    how="built now"
    build_major "$major" "$packages" || true
  fi
  read -r status seconds <"$packages/$suite.status"
  sed -n 's/^\(==\|deb-build:\|  \+[0-9]\+ [EWIPX]:\)/\1/p' "$packages/$suite.log" | sed "s/^/  [$suite] /"
  [ "$status" -eq 0 ] || { tail -n 30 "$packages/$suite.log"; fail "PostgreSQL $major ($suite): the build or lintian failed"; }
  warnings=$(grep -c 'warning:' "$packages/$suite/build.log" || true)
  [ "$warnings" -eq 0 ] || { grep 'warning:' "$packages/$suite/build.log" | head; fail "$suite: $warnings warnings in the build"; }
  ok "PostgreSQL $major ($suite): packages $how in $seconds s, lintian clean, no warning in the build"
done
phase "build"


# ---- a fresh root of a suite, with pgmq's packages installed by apt -------------------
# new_root SUITE: root becomes a copy of the suite's minbase root, mounted,
# that starts no service on its own (policy-rc.d), with apt's lists.
new_root() {
  local suite=$1 base
  root=$work/root-$suite
  base=$(minbase_rootfs "$suite") || fail "no $suite root filesystem"
  copy_rootfs "$base" "$root"
  mount_rootfs "$root" || fail "mounting /proc, /sys, /dev in $root"
  mounted+=("$root")
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  mkdir -p "$root/debs"
  in_root "$root" apt-get update >>"$root.apt.log" 2>&1 || { tail "$root.apt.log"; fail "apt-get update in $suite"; }
}

# in_root ROOT CMD...: CMD in ROOT, with an environment of its own.
in_root() {
  local root=$1
  shift
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# apt_install ROOT DEB...: apt-get install of package files (copied into ROOT).
apt_install() {
  local root=$1 deb args=()
  shift
  for deb in "$@"; do
    cp "$deb" "$root/debs/"
    args+=("/debs/$(basename "$deb")")
  done
  in_root "$root" apt-get install -y "${args[@]}" >>"$root.apt.log" 2>&1 || { tail -n 20 "$root.apt.log"; return 1; }
}

# rq ROOT SQL: SQL in ROOT's cluster, database postgres, as postgres.
rq() {
  in_root "$1" runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d postgres -c "$2"
}

# expect ROOT WHAT EXPECTED SQL
expect() {
  local got
  got=$(rq "$1" "$4" 2>&1) || fail "$2: $got"
  [ "$got" = "$3" ] || fail "$2: expected '$3', got '$got'"
  ok "$2"
}

# cluster ROOT MAJOR ACTION: pg_ctlcluster as postgres.
cluster() {
  in_root "$1" runuser -u postgres -- pg_ctlcluster "$2" main "$3"
}

# configure_cluster ROOT MAJOR PRELOAD: the packaged cluster "main" with
# shared_preload_libraries = PRELOAD, no TCP (the root shares this machine's
# network), through Debian's conf.d.
configure_cluster() {
  printf "listen_addresses = ''\nshared_preload_libraries = '%s'\n" "$3" \
    >"$1/etc/postgresql/$2/main/conf.d/pgmq-test.conf"
}

# round_trip ROOT: the extension made, a queue and a partitioned queue used.
round_trip() {
  local root=$1
  rq "$root" "CREATE EXTENSION IF NOT EXISTS pgmq" >/dev/null || fail "CREATE EXTENSION pgmq"
  rq "$root" "CREATE SCHEMA IF NOT EXISTS partman" >/dev/null
  rq "$root" "CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman" >/dev/null || fail "CREATE EXTENSION pg_partman"
  expect "$root" "CREATE EXTENSION pgmq: $ext_version, preloaded" "$ext_version|pgmq,pg_partman_bgw" \
    "SELECT extversion, current_setting('shared_preload_libraries') FROM pg_extension WHERE extname = 'pgmq'"
  rq "$root" "SELECT pgmq.create('pkg_jobs')" >/dev/null || fail "pgmq.create"
  expect "$root" "send" "1" "SELECT pgmq.send('pkg_jobs', '{\"n\": 1}')"
  expect "$root" "read" "1|1|{\"n\": 1}" "SELECT msg_id, read_ct, message FROM pgmq.read('pkg_jobs', 30, 5)"
  expect "$root" "delete" "t" "SELECT pgmq.delete('pkg_jobs', 1::bigint)"
  expect "$root" "... and the queue is empty" "0" "SELECT queue_length FROM pgmq.metrics('pkg_jobs')"
  rq "$root" "SELECT pgmq.create_partitioned('pkg_parts', '10', '100')" >/dev/null || fail "pgmq.create_partitioned"
  expect "$root" "a partitioned queue: pg_partman made its partitions" "1|t" \
    "SELECT (SELECT count(*) FROM partman.part_config WHERE parent_table = 'pgmq.q_pkg_parts'),
            (SELECT count(*) >= 2 FROM pg_inherits WHERE inhparent = 'pgmq.q_pkg_parts'::regclass)"
  expect "$root" "... 25 messages sent to it, read and deleted" "25|25|25" \
    "SELECT (SELECT count(*) FROM pgmq.send_batch('pkg_parts',
               ARRAY(SELECT jsonb_build_object('p', i) FROM generate_series(1, 25) AS i))),
            (SELECT count(*) FROM pgmq.read('pkg_parts', 30, 25)),
            (SELECT count(*) FROM pgmq.delete('pkg_parts', ARRAY(SELECT generate_series(1, 25)::bigint)))"
}

# ---- 17 and 18: a fresh install in each suite, in the background ----------------------
# fresh_install MAJOR (in a subshell of its own, which unmounts its root at
# its end): apt-get install of the extension package, its cluster, the round trip.
fresh_install() {
  local major=$1 suite deb p started=$SECONDS
  suite=$(rootfs_suite "$major")
  mounted=()
  trap release_mounted EXIT
  new_root "$suite"
  deb=$(ls "$packages/$suite/postgresql-$major-pgmq-cpp_${version}_"*.deb)
  apt_install "$root" "$deb" || fail "apt-get install ./$(basename "$deb") in $suite"
  for p in "postgresql-$major" "postgresql-$major-partman"; do
    in_root "$root" dpkg -s "$p" >/dev/null 2>&1 || fail "$p was not installed with the extension"
  done
  ok "PostgreSQL $major ($suite): apt-get install ./$(basename "$deb") brought postgresql-$major and postgresql-$major-partman"
  configure_cluster "$root" "$major" pgmq,pg_partman_bgw
  cluster "$root" "$major" start || fail "the cluster of PostgreSQL $major did not start"
  round_trip "$root"
  say "== PostgreSQL $major: install and round trip: $((SECONDS - started)) s"
}
# They overlap the previous package's build and 15's tests: apt and dpkg
# mostly wait on the network and the disk.
for major in $MAJORS; do
  [ "$major" != 15 ] || continue
  (fresh_install "$major") >"$work/install-$major.log" 2>&1 &
  install_jobs+=("$!:$major")
done

# The previous package: an earlier commit's tree with this tree's debian/ and
# an older version, so that apt sees this tree's package as its upgrade.
git -C "$repo" cat-file -e "$PREVIOUS^{commit}" 2>/dev/null ||
  fail "commit $PREVIOUS is not in this clone (a shallow clone? fetch its history)"
previous_src=$work/previous-src
mkdir "$previous_src"
git -C "$repo" archive "$PREVIOUS" | tar -x -C "$previous_src"
cp -r "$repo/debian" "$previous_src/"
previous_ext=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$previous_src/pgmq.control")
previous_version=$previous_ext-0~$PREVIOUS
dpkg --compare-versions "$previous_version" lt "$version" || fail "$previous_version is not older than $version"
{
  printf 'pgmq-cpp (%s) unstable; urgency=medium\n\n  * Built from commit %s for the upgrade test.\n\n' "$previous_version" "$PREVIOUS"
  printf ' -- %s  %s\n' "$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Maintainer)" "$(date -R)"
} >"$previous_src/debian/changelog"
# Same version, other SQL: ALTER EXTENSION pgmq UPDATE would keep a database
# on the previous SQL, which the new library does not fit.
if [ "$previous_ext" = "$ext_version" ] &&
  ! cmp -s "$previous_src/sql/pgmq--$ext_version.sql" "$repo/sql/pgmq--$ext_version.sql"; then
  fail "sql/pgmq--$ext_version.sql changed since commit $PREVIOUS but the extension's version did not: a database
  made by the previous package would keep the old SQL after ALTER EXTENSION pgmq UPDATE. Give pgmq.control a new
  default_version with an update script sql/pgmq--$previous_ext--<new>.sql (installed by Makefile.pgxs)"
fi
DEB_BUILD_OPTIONS=nocheck "$repo/scripts/build-packages.sh" --source "$previous_src" --majors 15 --extension-only \
  --out "$work/previous" >"$work/previous.log" 2>&1 || { tail -n 30 "$work/previous.log"; fail "building the previous package"; }
ok "the previous package $previous_version (extension $previous_ext) from commit $PREVIOUS"
phase "previous package"

# ---- 15: the previous package, the upgrade, removal ----------------------------------
new_root bookworm
apt_install "$root" "$work"/previous/bookworm/postgresql-15-pgmq-cpp_"${previous_version}"_*.deb ||
  fail "apt-get install of the previous package"
configure_cluster "$root" 15 pgmq,pg_partman_bgw
cluster "$root" 15 start || fail "the cluster of PostgreSQL 15 did not start"
rq "$root" "CREATE EXTENSION pgmq; CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman" >/dev/null ||
  fail "CREATE EXTENSION with the previous package"
rq "$root" "SELECT pgmq.create('up_plain');
  SELECT pgmq.send_batch('up_plain', ARRAY['{\"n\": 1}', '{\"n\": 2}', '{\"n\": 3}']::jsonb[],
                         ARRAY['{\"trace\": \"a\"}', NULL, '{}']::jsonb[]);
  SELECT pgmq.read('up_plain', 600, 1);
  SELECT pgmq.archive('up_plain', 3::bigint);
  SELECT pgmq.create_partitioned('up_parts', '10', '100');
  SELECT pgmq.send_batch('up_parts', ARRAY(SELECT jsonb_build_object('p', i) FROM generate_series(1, 25) AS i));" \
  >/dev/null || fail "queues and messages with the previous package"
snapshot="SELECT string_agg(concat_ws(' ', msg_id, read_ct, message, headers), '; ' ORDER BY msg_id) FROM pgmq.q_up_plain
  UNION ALL SELECT string_agg(concat_ws(' ', msg_id, message), '; ' ORDER BY msg_id) FROM pgmq.a_up_plain
  UNION ALL SELECT count(*) || ' ' || sum(msg_id) FROM pgmq.q_up_parts"
before=$(rq "$root" "$snapshot")
ok "the previous package ($previous_version): queues made, messages sent, read and archived"

new15=$(ls "$packages"/bookworm/postgresql-15-pgmq-cpp_"${version}"_*.deb)
apt_install "$root" "$new15" || fail "apt-get install ./$(basename "$new15") over $previous_version"
installed=$(in_root "$root" dpkg-query -W -f '${Version}' postgresql-15-pgmq-cpp)
[ "$installed" = "$version" ] || fail "installed over $previous_version: $installed, not $version"
ok "apt-get install ./$(basename "$new15") over $previous_version, with the server running"
# The server runs on with the library it loaded at its start.
expect "$root" "the running server still serves the queues after the package changed under it" "4" \
  "SELECT pgmq.send('up_plain', '{\"n\": 4}')"
cluster "$root" 15 restart || fail "restart after the upgrade"
rq "$root" "ALTER EXTENSION pgmq UPDATE" >/dev/null || fail "ALTER EXTENSION pgmq UPDATE"
expect "$root" "restart, ALTER EXTENSION pgmq UPDATE: extension $previous_ext -> $ext_version" "$ext_version" \
  "SELECT extversion FROM pg_extension WHERE extname = 'pgmq'"
after=$(rq "$root" "$snapshot")
expected=$(sed '1s/$/; 4 0 {"n": 4}/' <<<"$before")
[ "$after" = "$expected" ] || fail "the messages changed in the upgrade:
before: $expected
after:  $after"
ok "every message, archived message and partitioned message is as it was"
expect "$root" "... and read as before: message 1, read before the upgrade for 600 s, stays hidden" "2,4" \
  "SELECT string_agg(msg_id::text, ',' ORDER BY msg_id) FROM pgmq.read('up_plain', 30, 10)"
round_trip "$root"
phase "PostgreSQL 15: previous package, upgrade, round trip"

# Removing the package: the data stays. A server that preloads pgmq does
# not start without it (docs/operations.md says to take it out first).
in_root "$root" apt-get remove -y postgresql-15-pgmq-cpp >>"$root.apt.log" 2>&1 || fail "apt-get remove"
[ ! -e "$root/usr/lib/postgresql/15/lib/pgmq.so" ] || fail "pgmq.so is still there after apt-get remove"
if cluster "$root" 15 restart >/dev/null 2>&1; then
  fail "the server started with pgmq preloaded and its package removed"
fi
grep -q 'could not access file "pgmq"' "$root"/var/log/postgresql/postgresql-15-main.log ||
  fail "no 'could not access file \"pgmq\"' in the server log"
ok "removed: a server that preloads pgmq does not start (could not access file \"pgmq\")"
configure_cluster "$root" 15 pg_partman_bgw
cluster "$root" 15 start || fail "the server without pgmq in shared_preload_libraries did not start"
expect "$root" "without pgmq in shared_preload_libraries it starts; the queue tables and messages are there" "3|25" \
  "SELECT (SELECT count(*) FROM pgmq.q_up_plain), (SELECT count(*) FROM pgmq.q_up_parts)"
if rq "$root" "SELECT pgmq.send('up_plain', '{}')" >/dev/null 2>&1; then
  fail "pgmq.send worked without the package"
fi
apt_install "$root" "$new15" || fail "apt-get install again"
configure_cluster "$root" 15 pgmq,pg_partman_bgw
cluster "$root" 15 restart || fail "restart with the package installed again"
expect "$root" "installed again and preloaded: the queues work as before" "5|3" \
  "SELECT pgmq.send('up_plain', '{\"n\": 5}'), (SELECT count(*) FROM pgmq.q_up_plain WHERE msg_id < 5)"
phase "PostgreSQL 15: removal and reinstall"

# ---- pgmq-relay and pgmq-console -------------------------------------------------
apt_install "$root" "$packages"/bookworm/pgmq-relay_"${version}"_*.deb "$packages"/bookworm/pgmq-console_"${version}"_*.deb ||
  fail "apt-get install of pgmq-relay and pgmq-console"
for user in pgmq_relay pgmq_console; do
  entry=$(in_root "$root" getent passwd "$user") || fail "no system user $user"
  IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
  [ "$uid" -lt 1000 ] && [ "$home" = /nonexistent ] && [ "$shell" = /usr/sbin/nologin ] ||
    fail "$user is not a system user without a home and a login: $entry"
done
ok "system users pgmq_relay and pgmq_console (no home, no login)"
mode=$(in_root "$root" stat -c '%U:%G %a' /etc/pgmq-relay/relay.json)
[ "$mode" = "root:pgmq_relay 640" ] || fail "/etc/pgmq-relay/relay.json is $mode, not root:pgmq_relay 640"
ok "/etc/pgmq-relay/relay.json: root:pgmq_relay 640"
for pair in pgmq-relay:/etc/pgmq-relay/relay.json pgmq-console:/etc/default/pgmq-console; do
  in_root "$root" dpkg-query -W -f '${Conffiles}\n' "${pair%%:*}" | grep -q "^ ${pair#*:} " ||
    fail "${pair#*:} is not a conffile of ${pair%%:*}"
done
ok "the configuration files are conffiles, which an upgrade does not overwrite"
for unit in pgmq-relay pgmq-console; do
  [ ! -e "$root/etc/systemd/system/multi-user.target.wants/$unit.service" ] || fail "$unit is enabled on install"
done
ok "both units are installed disabled (systemctl enable --now starts them)"
# --help and the man page's OPTIONS name the same options.
for program in pgmq-relay pgmq-console; do
  from_help=$(in_root "$root" "$program" --help | grep -o -- '--[a-z-]*' | sort -u)
  from_man=$(zcat "$root/usr/share/man/man1/$program.1.gz" | sed -n '/^\.SH OPTIONS/,/^\.SH [^O]/p' |
    sed 's/\\-/-/g' | grep -o -- '--[a-z-]*' | sort -u)
  [ "$from_help" = "$from_man" ] || fail "$program: --help and the man page name different options:
$(diff <(echo "$from_help") <(echo "$from_man"))"
done
ok "each program's --help and man page name the same options"
in_root "$root" apt-get install -y --no-install-recommends systemd man-db >>"$root.apt.log" 2>&1 ||
  fail "apt-get install systemd man-db"
in_root "$root" systemd-analyze verify pgmq-relay.service pgmq-console.service ||
  fail "systemd-analyze verify"
ok "systemd-analyze verify accepts both units"
for unit in pgmq-relay pgmq-console; do
  exposure=$(in_root "$root" systemd-analyze security --offline=yes "$unit.service" 2>/dev/null | tail -n 1)
  say "$unit.service: systemd-analyze security: ${exposure#→ }"
done
phase "pgmq-relay and pgmq-console: install, users, conffiles, units"
/usr/bin/python3 "$repo/test/lib/package_services.py" "$root" || fail "running the units' ExecStart"
phase "pgmq-relay and pgmq-console: ExecStart as the units' users"

# ---- the fresh installs' results -------------------------------------------------
failed_majors=
for job in "${install_jobs[@]}"; do
  status=0
  wait "${job%%:*}" || status=$?
  cat "$work/install-${job#*:}.log"
  [ "$status" -eq 0 ] || failed_majors="$failed_majors ${job#*:}"
done
install_jobs=()
[ -z "$failed_majors" ] || fail "the fresh install of PostgreSQL$failed_majors"
phase "waiting for the fresh installs of 17 and 18"
