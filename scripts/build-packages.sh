#!/usr/bin/env bash
# scripts/build-packages.sh: builds the Debian packages of this checkout for
# every PostgreSQL major that this machine's Debian suites package, and
# prints where they are. As root, on Debian 12:
#
#   major  suite     where it is built                       packages
#   15     bookworm  this system                             postgresql-15-pgmq-cpp, pgmq-relay, pgmq-console
#   17     trixie    a root filesystem (test/lib/rootfs.sh)  postgresql-17-pgmq-cpp
#   18     forky     a root filesystem (test/lib/rootfs.sh)  postgresql-18-pgmq-cpp
#
# Each suite packages one major, so each extension package is built inside
# its own suite; the roots are made on first use (debootstrap, a few minutes)
# and kept in /var/cache/pgmq-rootfs for the tests and the next build.
#
#   scripts/build-packages.sh [--out DIR] [--majors "15 17 18"] [--source DIR]
#                             [--extension-only] [--lintian]
#
#   --out DIR           where the packages go, a folder per suite (default build/packages)
#   --majors LIST       the majors to build (default 15 17 18)
#   --source DIR        package that source tree (with a debian/) instead of this checkout
#   --extension-only    not pgmq-relay and pgmq-console (build profile pkg.pgmq-cpp.noprograms)
#   --lintian           check each suite's packages with that suite's lintian, and the
#                       source package with the host's; an error or warning fails
#
# DEB_BUILD_OPTIONS passes through (nocheck skips the unit tests at build time).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/test/lib/rootfs.sh"

out=$repo/build/packages
majors="15 17 18"
source_dir=
lintian=
host_profiles=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift ;;
    --majors) majors=$2; shift ;;
    --source) source_dir=$(realpath "$2"); shift ;;
    --lintian) lintian=--lintian ;;
    --extension-only) host_profiles=(--profiles pkg.pgmq-cpp.noprograms) ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "build-packages.sh: run it as root (apt-get, root filesystems)" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
started=$SECONDS
work=$(mktemp -d /tmp/pgmq-build-packages.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- the source package, made on the host once for every suite ---------------------
t=$SECONDS
tree=$work/tree
mkdir "$tree"
if [ -n "$source_dir" ]; then
  tar -C "$source_dir" --exclude=./.git --exclude=./build -cf - . | tar -C "$tree" -xf -
else
  # What a clone has: tracked and unignored files, no build products.
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$tree" -xf -
fi
version=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)
upstream=${version%-*}
name=pgmq-cpp-$upstream
mv "$tree" "$work/$name"
tar -C "$work" --exclude="./$name/debian" -czf "$work/pgmq-cpp_$upstream.orig.tar.gz" "./$name"
command -v pg_buildext >/dev/null && command -v dh >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debhelper postgresql-server-dev-all >/dev/null
(cd "$work/$name" && pg_buildext updatecontrol && dpkg-source -b . >/dev/null)
rm -rf "$out/source"
mkdir -p "$out/source"
cp "$work"/*.dsc "$work"/*.orig.tar.gz "$work"/*.debian.tar.xz "$out/source/"
dsc=$(ls "$out"/source/*.dsc)
echo "== source package $version: $((SECONDS - t)) s"
if [ -n "$lintian" ]; then
  t=$SECONDS
  command -v lintian >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends lintian >/dev/null
  status=0
  lintian --fail-on error,warning --info --display-info --pedantic "$dsc" >"$out/source/lintian.txt" 2>&1 || status=$?
  grep -E '^[EWIPX]: ' "$out/source/lintian.txt" | sort | uniq -c | sed 's/^/  /' || true
  echo "== lintian of the source package: exit $status, $((SECONDS - t)) s"
  [ "$status" -eq 0 ] || exit "$status"
fi

# --- the binary packages, in each major's suite ---------------------------------
failed=
for major in $majors; do
  t=$SECONDS
  suite=$(rootfs_suite "$major") || { echo "no Debian suite known for PostgreSQL $major" >&2; exit 2; }
  rm -rf "${out:?}/$suite"
  if [ "$major" = 15 ]; then
    # The host is bookworm: the extension for 15, and the programs.
    echo "== PostgreSQL 15${host_profiles[*]:+ (extension only)}: building on this system ($suite)"
    "$repo/scripts/lib/deb-build.sh" "$dsc" "$out/$suite" "${host_profiles[@]}" $lintian || failed="$failed $major"
  else
    # Only the extension: the programs are built on the host.
    echo "== PostgreSQL $major: building in the $suite root filesystem"
    root=$(ensure_rootfs "$major")
    # One user of a root at a time (test/run's run_in_rootfs takes the same lock).
    exec {lock}>"$root.lock"
    flock "$lock"
    inner=tmp/pgmq-build-packages.$$
    rm -rf "${root:?}/$inner"
    mkdir -p "$root/$inner/out"
    cp "$out"/source/*.dsc "$out"/source/*.tar.* "$repo/scripts/lib/deb-build.sh" "$root/$inner/"
    in_rootfs "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-}" PGMQ_BUILD_JOBS="${PGMQ_BUILD_JOBS:-2}" \
      bash "/$inner/deb-build.sh" "/$inner/$(basename "$dsc")" "/$inner/out" \
      --profiles pkg.pgmq-cpp.noprograms $lintian || failed="$failed $major"
    mkdir -p "$out/$suite"
    cp -r "$root/$inner/out/." "$out/$suite/"
    rm -rf "${root:?}/$inner"
    exec {lock}>&-
  fi
  echo "== PostgreSQL $major ($suite): $((SECONDS - t)) s"
done

echo "== packages ($((SECONDS - started)) s), in $out:"
(cd "$out" && find . -name '*.deb' -o -name '*.dsc' | sort | sed 's|^\./|  |')
if [ -n "$failed" ]; then
  echo "build-packages.sh: failed for PostgreSQL$failed (see $out/<suite>/build.log, lintian.txt)" >&2
  exit 1
fi
